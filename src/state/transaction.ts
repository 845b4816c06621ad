// One PostgreSQL transaction on a connection of its own: BEGIN, the work, COMMIT; on any failure
// ROLLBACK and the error rethrown, and a connection that failed is dropped from the pool rather than
// reused. A connection lost while checked out is an 'error' event that would throw without a
// listener: it is listened for here. `inRetriedTransaction` runs the work again when PostgreSQL
// chose the transaction as a deadlock's victim (for work with no effect outside the transaction).
import type pg from 'pg'

export async function inTransaction<T>(db: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await db.connect()
  let failed: Error | undefined
  const lost = (err: Error) => {
    failed ??= err
  }
  client.on('error', lost)
  try {
    await client.query('BEGIN')
    const result = await work(client)
    await client.query('COMMIT')
    return result
  } catch (err) {
    failed = err as Error
    await client.query('ROLLBACK').catch(() => {})
    throw err
  } finally {
    client.removeListener('error', lost)
    client.release(failed)
  }
}

/** PostgreSQL's SQLSTATE of a transaction aborted to break a deadlock. */
const DEADLOCK = '40P01'

/**
 * As `inTransaction`, run again (up to `attempts` times in all) when aborted as a deadlock's victim:
 * two writers that lock the same rows in different orders (a detection commit and a bulk triage)
 * both go through. `work` must have no effect outside its transaction.
 */
export async function inRetriedTransaction<T>(
  db: pg.Pool,
  work: (client: pg.PoolClient, attempt: number) => Promise<T>,
  attempts = 3,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await inTransaction(db, (client) => work(client, attempt))
    } catch (err) {
      if (attempt >= attempts || (err as { code?: unknown }).code !== DEADLOCK) throw err
    }
  }
}
