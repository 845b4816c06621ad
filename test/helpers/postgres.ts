// The tests' PostgreSQL (postgres-server.ts): one server per test process, started on first use
// and reused, stopped when the test file ends; a fresh database per test (`freshDatabase`).
import pg from 'pg'
import t from 'tap'
import { startPostgres, type TestPostgres } from './postgres-server.js'

export { postgresBin, startPostgres, type TestPostgres } from './postgres-server.js'

let shared: Promise<TestPostgres> | undefined
let databases = 0

/** This test process's server: started on first use, stopped when the test file ends. */
export function testPostgres(): Promise<TestPostgres> {
  if (!shared) {
    shared = startPostgres()
    const started = shared
    t.teardown(async () => (await started).stop())
  }
  return shared
}

/** A new, empty database on this process's server; answers its connection URL. */
export async function freshDatabase(): Promise<string> {
  const server = await testPostgres()
  const name = `rk_test_${process.pid}_${++databases}`
  const admin = new pg.Client({ connectionString: server.url() })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  return server.url(name)
}
