// The PostgreSQL store's schema migrations (src/state/migrations.ts): applied at start in version
// order, once: replicas starting at the same moment on an empty database apply each migration
// exactly once between them (the advisory lock), and a migration that fails leaves nothing applied.
import pg from 'pg'
import pino from 'pino'
import t from 'tap'
import { MIGRATIONS, migrate } from '../../src/state/migrations.js'
import { openPostgres } from '../../src/state/postgres.js'
import { freshDatabase } from '../helpers/postgres.js'

const logger = pino({ level: 'silent' })

async function rows(url: string, sql: string): Promise<unknown[]> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return (await c.query(sql)).rows
  } finally {
    await c.end()
  }
}

t.test('a start migrates an empty database; the next start applies nothing', async (t) => {
  const url = await freshDatabase()
  const pool = await openPostgres({ url }, logger)
  t.teardown(() => pool.end())
  const versions = MIGRATIONS.map((m) => m.version)
  t.same(
    await rows(url, 'SELECT version FROM schema_migrations ORDER BY version'),
    versions.map((version) => ({ version })),
  )
  t.same(await migrate(pool), [], 'nothing left to apply')
  t.same(
    await rows(url, "SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'detection_checkpoints'"),
    [{ n: 1 }],
    'the ledger tables exist',
  )
})

t.test('starts at the same moment apply each migration exactly once between them', async (t) => {
  const url = await freshDatabase()
  // Migrations that fail when applied twice (a table created without IF NOT EXISTS), and count runs.
  const list = [
    { version: 1, name: 'one', sql: 'CREATE TABLE runs (version int); INSERT INTO runs VALUES (1)' },
    { version: 2, name: 'two', sql: 'CREATE TABLE two (n int); INSERT INTO runs VALUES (2); SELECT pg_sleep(0.05)' },
    { version: 3, name: 'three', sql: 'CREATE TABLE three (n int); INSERT INTO runs VALUES (3)' },
  ]
  const pools = Array.from({ length: 4 }, () => new pg.Pool({ connectionString: url, max: 1 }))
  t.teardown(() => Promise.all(pools.map((p) => p.end())))
  const applied = await Promise.all(pools.map((p) => migrate(p, list)))
  t.same(applied.flat().sort(), [1, 2, 3], 'each version applied by one start')
  t.same(await rows(url, 'SELECT version FROM runs ORDER BY version'), [{ version: 1 }, { version: 2 }, { version: 3 }])
  // A later version given to one start: only it is applied, after the others.
  const more = [...list, { version: 4, name: 'four', sql: 'INSERT INTO runs VALUES (4)' }]
  t.same(await Promise.all(pools.slice(0, 2).map((p) => migrate(p, more))).then((a) => a.flat()), [4])
})

t.test('two service starts at once on an empty database: both open, the schema applied once', async (t) => {
  const url = await freshDatabase()
  const pools = await Promise.all([openPostgres({ url }, logger), openPostgres({ url }, logger)])
  t.teardown(() => Promise.all(pools.map((p) => p.end())))
  t.same(
    await rows(url, 'SELECT version, count(*)::int AS n FROM schema_migrations GROUP BY version ORDER BY version'),
    MIGRATIONS.map((m) => ({ version: m.version, n: 1 })),
  )
})

t.test('a migration that fails applies nothing, not even the ones before it', async (t) => {
  const url = await freshDatabase()
  const pool = new pg.Pool({ connectionString: url, max: 1 })
  t.teardown(() => pool.end())
  const list = [
    { version: 1, name: 'good', sql: 'CREATE TABLE good (n int)' },
    { version: 2, name: 'bad', sql: 'CREATE TABLE bad (n no_such_type)' },
  ]
  await t.rejects(migrate(pool, list), /no_such_type/)
  t.same(
    await rows(url, "SELECT tablename FROM pg_tables WHERE tablename IN ('good', 'schema_migrations')"),
    [],
    'the failed start left no table behind',
  )
  t.same(await migrate(pool, list.slice(0, 1)), [1], 'a start without the bad migration applies the good one')
})
