// One process per replica name (src/state/replica-lock.ts): a second holder of the same name over
// one PostgreSQL is refused with a message naming the setting, another name is not; the name is
// free again at once when its holder releases it, or when the process holding it is SIGKILLed (its
// connection drops); a service started with a name another process holds does not start.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import pino from 'pino'
import t from 'tap'
import { holdReplicaName, replicaLockKey } from '../../src/state/replica-lock.js'
import { startInProcess } from '../helpers/in-process.js'
import { freshDatabase } from '../helpers/postgres.js'
import { tempDir } from '../helpers/rulekeeper.js'
import { waitFor } from '../helpers/wait.js'

const logger = pino({ level: 'silent' })

t.test('a name is held by one holder at a time; released, it is free at once', async (t) => {
  const url = await freshDatabase()
  const a = await holdReplicaName(url, 'rk-a', logger)
  await t.rejects(holdReplicaName(url, 'rk-a', logger), {
    code: 'Unavailable',
    message: /another process runs as replica rk-a.*state\.replica/,
  })
  const b = await holdReplicaName(url, 'rk-b', logger)
  t.pass('another name is free')
  await a.release()
  const again = await holdReplicaName(url, 'rk-a', logger)
  t.pass('released: free at once')
  await Promise.all([again.release(), b.release()])
})

t.test('a SIGKILLed holder frees the name without waiting for a time to live', async (t) => {
  const url = await freshDatabase()
  // Another process holds the lock as the service does (the same two keys), then is killed.
  // psql reads its commands from a pipe kept open: after the lock its connection is idle, as the
  // service's is (a backend busy in a query would notice a dead client only when the query ends).
  const holder = spawn('psql', [url, '-v', 'ON_ERROR_STOP=1'], { stdio: ['pipe', 'ignore', 'ignore'] })
  holder.stdin.write(`SELECT pg_advisory_lock(${0x726b7270}, ${replicaLockKey('rk-k')});\n`)
  t.teardown(() => holder.kill('SIGKILL'))
  await waitFor('the other process holds the name', async () => {
    try {
      ;(await holdReplicaName(url, 'rk-k', logger)).release()
      return false
    } catch {
      return true
    }
  })
  holder.kill('SIGKILL')
  const started = Date.now()
  const lock = await waitFor('the name free again', async () =>
    holdReplicaName(url, 'rk-k', logger).catch(() => undefined),
  )
  t.ok(Date.now() - started < 5_000, `free ${Date.now() - started} ms after the kill`)
  await lock.release()
})

t.test('a service started with a replica name another process holds does not start', async (t) => {
  const url = await freshDatabase()
  const held = await holdReplicaName(url, 'rk-twin', logger)
  t.teardown(() => held.release())
  const dataDir = tempDir('rk-replica-twin-')
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }))
  await t.rejects(
    startInProcess({ dataDir, config: { state: { postgres: { url }, replica: 'rk-twin' } } }),
    /another process runs as replica rk-twin/,
  )
  await held.release()
  const s = await startInProcess({ dataDir, config: { state: { postgres: { url }, replica: 'rk-twin' } } })
  t.pass('once the name is free it starts')
  await s.close()
})
