// Transactions on the PostgreSQL store (src/state/transaction.ts): two writers that lock the same two
// rows in opposite orders deadlock; PostgreSQL aborts one. Under `inTransaction` the victim's error
// reaches its caller; under `inRetriedTransaction` the victim runs again and both go through, each
// change applied once.
import type pg from 'pg'
import pino from 'pino'
import t, { type Test } from 'tap'
import { openPostgres } from '../../src/state/postgres.js'
import { inRetriedTransaction, inTransaction } from '../../src/state/transaction.js'
import { freshDatabase } from '../helpers/postgres.js'

const logger = pino({ level: 'silent' })

/** A barrier of two: each side waits until both arrived. */
function barrier() {
  let arrived = 0
  let release!: () => void
  const both = new Promise<void>((r) => {
    release = r
  })
  return () => {
    if (++arrived === 2) release()
    return both
  }
}

/** A table of two cells on a fresh database (deadlocks are found after deadlock_timeout: 1 s). */
async function setUp(t: Test) {
  const url = await freshDatabase()
  const db = await openPostgres({ url, max: 4 }, logger)
  t.teardown(() => db.end())
  await db.query('CREATE TABLE cells (id int PRIMARY KEY, v int NOT NULL)')
  await db.query('INSERT INTO cells VALUES (1, 0), (2, 0)')
  return db
}

/** The two cells' values, in id order. */
const cells = async (db: pg.Pool) => (await db.query('SELECT v FROM cells ORDER BY id')).rows.map((r) => r.v as number)

/** Adds 1 to both cells, locking `first` then the other; the first attempt waits for the other writer between. */
const writer =
  (first: number, meet: () => Promise<void>) =>
  async (client: pg.PoolClient, attempt = 1): Promise<number> => {
    await client.query('UPDATE cells SET v = v + 1 WHERE id = $1', [first])
    if (attempt === 1) await meet()
    await client.query('UPDATE cells SET v = v + 1 WHERE id = $1', [3 - first])
    return attempt
  }

t.test('a deadlock aborts one of two plain transactions', async (t) => {
  const db = await setUp(t)
  const meet = barrier()
  const results = await Promise.allSettled([inTransaction(db, writer(1, meet)), inTransaction(db, writer(2, meet))])
  const failed = results.filter((r) => r.status === 'rejected')
  t.equal(failed.length, 1, 'one victim')
  t.equal((failed[0] as PromiseRejectedResult).reason.code, '40P01', 'deadlock_detected')
  t.same(await cells(db), [1, 1], 'only the survivor’s change')
})

t.test('a retried transaction runs again after losing a deadlock: both changes applied once', async (t) => {
  const db = await setUp(t)
  const meet = barrier()
  const attempts = await Promise.all([
    inRetriedTransaction(db, writer(1, meet)),
    inRetriedTransaction(db, writer(2, meet)),
  ])
  t.same([...attempts].sort(), [1, 2], 'the victim went through at its second attempt')
  t.same(await cells(db), [2, 2], 'each writer’s change once')
})

t.test('other errors are not retried', async (t) => {
  const db = await setUp(t)
  let runs = 0
  await t.rejects(
    inRetriedTransaction(db, async (client) => {
      runs++
      await client.query('SELECT no_such_column FROM cells')
    }),
    { code: '42703' },
  )
  t.equal(runs, 1)
})
