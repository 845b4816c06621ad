// One `rulekeeper serve` per data directory: a lock file holding the owner's pid. A lock whose
// process is gone (a crash, SIGKILL) is taken over; a live owner makes the second server refuse.
import fs from 'node:fs'
import path from 'node:path'
import { RulekeeperError } from '../errors.js'

export interface DataDirLock {
  release(): void
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

export function lockDataDir(dataDir: string): DataDirLock {
  const file = path.join(dataDir, 'server.lock')
  fs.mkdirSync(dataDir, { recursive: true })
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = fs.openSync(file, 'wx', 0o644)
      fs.writeSync(fd, `${process.pid}\n`)
      fs.fsyncSync(fd)
      fs.closeSync(fd)
      return {
        release() {
          try {
            if (fs.readFileSync(file, 'utf8').trim() === String(process.pid)) fs.unlinkSync(file)
          } catch {
            /* already gone */
          }
        },
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      const pid = Number.parseInt(fs.readFileSync(file, 'utf8'), 10)
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
        throw new RulekeeperError('DataDirLocked', `data directory ${dataDir} is in use by another rulekeeper server (pid ${pid})`)
      }
      fs.rmSync(file, { force: true })
    }
  }
  throw new RulekeeperError('DataDirLocked', `cannot lock data directory ${dataDir}`)
}
