// The singletons of a replica over PostgreSQL (`state.postgres`), opened by main.ts before anything
// touches the shared events directory: its name, held by this process alone (replica-lock.ts); one
// pool (its schema migrated) for the lease, the slot records and the delivery outbox; one lease, `schedules`,
// taken and renewed from the start, under which scheduled queries and correlation rules run on one
// replica at a time, each family's slots recorded in `job_runs` under its own prefix. Closing gives
// the lease back (another replica takes it at once) and ends the pool.
import type pg from 'pg'
import type { Logger } from '../log.js'
import { unavailable } from '../errors.js'
import { PgLease } from './lease.js'
import { PgSlots } from './lease-slots.js'
import { holdReplicaName } from './replica-lock.js'
import { openPostgres } from './postgres.js'

/** The lease's name: one for every scheduled family (they run on the same replica). */
export const SCHEDULES_LEASE = 'schedules'

export interface SharedSingletons {
  db: pg.Pool
  lease: PgLease
  querySlots: PgSlots
  correlationSlots: PgSlots
  close(): Promise<void>
}

export async function openSingletons(
  o: { url: string; replica: string; ttlMs?: number },
  logger: Logger,
): Promise<SharedSingletons> {
  let db: pg.Pool
  try {
    db = await openPostgres({ url: o.url }, logger)
  } catch (err) {
    throw unavailable(`the PostgreSQL state store cannot be opened: ${(err as Error).message}`)
  }
  const name = await holdReplicaName(o.url, o.replica, logger).catch(async (err: unknown) => {
    await db.end().catch(() => {})
    throw err
  })
  const lease = new PgLease(db, { name: SCHEDULES_LEASE, replica: o.replica, ttlMs: o.ttlMs }, logger)
  await lease.start()
  let closing: Promise<void> | null = null
  return {
    db,
    lease,
    querySlots: new PgSlots(db, lease, 'query:'),
    correlationSlots: new PgSlots(db, lease, 'correlation:'),
    close() {
      closing ??= lease
        .stop()
        .then(() => db.end())
        .finally(() => name.release())
      return closing
    },
  }
}
