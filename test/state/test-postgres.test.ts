// The tests' PostgreSQL (test/helpers/postgres.ts): a fresh database per call on one server per
// test process, the server running as an ordinary user when the tests run as root, and killed when
// the process that started it dies, however it dies (SIGKILL included: no server outlives a test).
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import t from 'tap'
import { freshDatabase, postgresBin, testPostgres } from '../helpers/postgres.js'
import { waitFor } from '../helpers/wait.js'

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

t.test('each call gives a new empty database on the one server of this process', async (t) => {
  const a = await freshDatabase()
  const b = await freshDatabase()
  t.not(a, b)
  const server = await testPostgres()
  t.equal(await testPostgres(), server, 'one server, reused')
  const c = new pg.Client({ connectionString: a })
  await c.connect()
  try {
    await c.query('CREATE TABLE x (n int)')
    const owner = (await c.query("SELECT current_setting('data_directory') AS d")).rows[0].d as string
    const uid = fs.statSync(owner).uid
    if (process.getuid?.() === 0) t.not(uid, 0, 'as root, the server runs as an ordinary user')
    else t.equal(uid, process.getuid?.(), 'the server runs as the test user')
  } finally {
    await c.end()
  }
  const d = new pg.Client({ connectionString: b })
  await d.connect()
  t.same((await d.query("SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'x'")).rows, [{ n: 0 }])
  await d.end()
})

t.test('a server dies with the process that started it, even a SIGKILLed one', { skip: !postgresBin() }, async (t) => {
  const helper = path.join(import.meta.dirname, '..', 'helpers', 'postgres-server.ts')
  const script = `import { startPostgres } from ${JSON.stringify(helper)}; const s = await startPostgres(); console.log(JSON.stringify({ pid: s.pid, dir: s.dir })); setInterval(() => {}, 1000)`
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let out = ''
  child.stdout!.setEncoding('utf8').on('data', (s: string) => {
    out += s
  })
  const started = await waitFor('the child to start its server', () => out.includes('\n') && out, 60_000)
  const { pid, dir } = JSON.parse(started) as { pid: number; dir: string }
  t.ok(alive(pid), 'the server runs')
  child.kill('SIGKILL')
  await waitFor('the server to stop after its parent died', () => !alive(pid), 20_000)
  t.pass('the server is gone')
  fs.rmSync(dir, { recursive: true, force: true })
})
