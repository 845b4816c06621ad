// One `rulekeeper serve` per data directory: `server.lock` names the owner by pid, process start
// time and boot id (Linux /proc). The lock is stale, and taken over, when that process is gone or
// when the pid now belongs to another process (its start time or the boot differs: pids are reused
// after a crash or a reboot). A lock of an older version (pid only) is stale when the process holding
// the pid started after the lock was written. A live owner makes the second server refuse.
import fs from 'node:fs'
import path from 'node:path'
import { RulekeeperError } from '../errors.js'
import { bootId, processStartTime, startedAfter } from './process-identity.js'

export interface DataDirLock {
  release(): void
}

interface LockOwner {
  pid: number
  start: string | null
  boot: string | null
}

/** Lock files this process holds (a second in-process server on the same directory is refused too). */
const held = new Set<string>()

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function parse(text: string): LockOwner | null {
  const [first, second = ''] = text.split('\n')
  const pid = Number.parseInt(first ?? '', 10)
  if (!Number.isInteger(pid) || pid <= 0) return null
  const field = (k: string) => new RegExp(`(?:^| )${k} (\\S+)`).exec(second)?.[1] ?? null
  return { pid, start: field('start'), boot: field('boot') }
}

function format(): string {
  const start = processStartTime(process.pid)
  const boot = bootId()
  return `${process.pid}\n${[start && `start ${start}`, boot && `boot ${boot}`].filter(Boolean).join(' ')}\n`
}

/** Why the recorded owner still holds the lock, or null when the lock is stale. */
function liveOwner(file: string, owner: LockOwner): string | null {
  if (owner.pid === process.pid) return held.has(file) ? 'this process' : null
  if (!alive(owner.pid)) return null
  const boot = bootId()
  if (owner.boot && boot && owner.boot !== boot) return null // written before a reboot
  const start = processStartTime(owner.pid)
  if (owner.start && start) return owner.start === start ? `pid ${owner.pid}` : null // pid reused
  if (!owner.start && startedAfter(start, fs.statSync(file).mtimeMs)) return null // legacy lock, pid reused
  return `pid ${owner.pid}` // cannot tell (no /proc): assume it is the owner
}

export function lockDataDir(dataDir: string): DataDirLock {
  const file = path.join(dataDir, 'server.lock')
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = fs.openSync(file, 'wx', 0o600)
      try {
        fs.writeSync(fd, format())
        fs.fsyncSync(fd)
      } finally {
        fs.closeSync(fd)
      }
      held.add(file)
      return {
        release() {
          held.delete(file)
          try {
            if (parse(fs.readFileSync(file, 'utf8'))?.pid === process.pid) fs.unlinkSync(file)
          } catch {
            /* already gone */
          }
        },
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      let text: string
      try {
        text = fs.readFileSync(file, 'utf8')
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue
        throw e
      }
      const owner = parse(text)
      const who = owner && liveOwner(file, owner)
      if (who) {
        throw new RulekeeperError(
          'DataDirLocked',
          `data directory ${dataDir} is in use by another rulekeeper server (${who === 'this process' ? `pid ${process.pid}, this process` : who}); ` +
            `if no rulekeeper server runs on it, remove ${file}`,
        )
      }
      // Stale (or torn by a crash between create and write): take it over, unless it changed meanwhile.
      try {
        if (fs.readFileSync(file, 'utf8') === text) fs.rmSync(file, { force: true })
      } catch {
        /* removed meanwhile: try again */
      }
    }
  }
  throw new RulekeeperError('DataDirLocked', `cannot lock data directory ${dataDir}`)
}
