// One PostgreSQL transaction on a connection of its own: BEGIN, the work, COMMIT; on any failure
// ROLLBACK and the error rethrown, and a connection that failed is dropped from the pool rather than
// reused. A connection lost while checked out is an 'error' event that would throw without a
// listener: it is listened for here.
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
