// server.lock (issue 11): a lock naming a live process that is not its writer (a pid reused after a
// crash or a reboot) is stale and taken over; a lock naming its live writer refuses the start with
// a clear message, whether that server runs in another process or in this one.
// Real port: a second process (a live server holding the lock).
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { startChild } from '../helpers/child-server.js'
import { startInProcess } from '../helpers/in-process.js'
import { tempDir } from '../helpers/rulekeeper.js'
import { bootId, processStartTime } from '../../src/data-dir/process-identity.js'

/** A live process that is certainly not a rulekeeper server. */
function sleeper(t: { teardown(fn: () => unknown): void }): ChildProcess {
  const c = spawn('sleep', ['600'], { stdio: 'ignore' })
  t.teardown(() => void c.kill('SIGKILL'))
  return c
}

const lockOf = (dataDir: string) => path.join(dataDir, 'server.lock')

t.test('a stale lock naming a live unrelated pid does not refuse the start', async (t) => {
  const sleep = sleeper(t)
  for (const [what, pid] of [
    ['pid 1', 1],
    ['a sleeping child', sleep.pid!],
    ['this test process', process.pid],
  ] as const) {
    const dataDir = tempDir()
    // Written by a server whose pid was later reused: its start time is not the live process's.
    fs.writeFileSync(lockOf(dataDir), `${pid}\nstart 1 boot ${bootId() ?? 'unknown'}\n`)
    const s = await startInProcess({ dataDir })
    t.equal(
      fs.readFileSync(lockOf(dataDir), 'utf8').split('\n')[0],
      String(process.pid),
      `${what}: the lock was taken over`,
    )
    await s.close()
    t.notOk(fs.existsSync(lockOf(dataDir)), `${what}: released at close`)
  }
})

t.test('a lock written before a reboot does not refuse the start', async (t) => {
  const dataDir = tempDir()
  fs.writeFileSync(
    lockOf(dataDir),
    `1\nstart ${processStartTime(1) ?? '1'} boot 00000000-0000-0000-0000-000000000000\n`,
  )
  const s = await startInProcess({ dataDir })
  t.teardown(() => s.close())
  t.equal(fs.readFileSync(lockOf(dataDir), 'utf8').split('\n')[0], String(process.pid))
})

t.test('a lock of the older pid-only form is stale when the pid started after it was written', async (t) => {
  const dataDir = tempDir()
  const sleep = sleeper(t)
  fs.writeFileSync(lockOf(dataDir), `${sleep.pid}\n`)
  const hourAgo = new Date(Date.now() - 3600_000)
  fs.utimesSync(lockOf(dataDir), hourAgo, hourAgo)
  const s = await startInProcess({ dataDir })
  t.teardown(() => s.close())
  t.equal(fs.readFileSync(lockOf(dataDir), 'utf8').split('\n')[0], String(process.pid))
})

t.test('a lock naming its live writer refuses the start and is left alone', async (t) => {
  const sleep = sleeper(t)
  const dataDir = tempDir()
  // What a live server on another process writes: its pid, start time and this boot.
  const text = `${sleep.pid}\nstart ${processStartTime(sleep.pid!)} boot ${bootId()}\n`
  fs.writeFileSync(lockOf(dataDir), text)
  await t.rejects(startInProcess({ dataDir }), {
    code: 'DataDirLocked',
    message: new RegExp(
      `in use by another rulekeeper server \\(pid ${sleep.pid}\\); if no rulekeeper server runs on it, remove .*server\\.lock`,
    ),
  })
  t.equal(fs.readFileSync(lockOf(dataDir), 'utf8'), text, 'the lock is untouched')
})

t.test('a second live server is refused: in another process, or in this one', async (t) => {
  const dataDir = tempDir()
  const child = await startChild({ dataDir })
  t.teardown(() => child.kill())
  await t.rejects(
    startInProcess({ dataDir }),
    { code: 'DataDirLocked', message: new RegExp(`pid ${child.pid}\\)`) },
    'a server in another process',
  )
  t.equal((await fetch(`${child.url}/healthz`)).status, 200, 'the first server keeps serving')
  await child.stop()

  const first = await startInProcess({ dataDir })
  t.teardown(() => first.close())
  await t.rejects(
    startInProcess({ dataDir }),
    { code: 'DataDirLocked', message: /this process/ },
    'a second server in this process',
  )
  t.equal((await first.send('GET', '/healthz')).status, 200)
})
