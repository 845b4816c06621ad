// The connection to the PostgreSQL state store (`state.postgres.url`): one pool per process, its
// schema brought up to date at open (migrations.ts). A connection that fails (the server restarted,
// a backend terminated) is dropped from the pool and a later query opens a new one; an idle
// connection's error is logged, never thrown into the process.
import pg from 'pg'
import type { Logger } from '../log.js'
import { migrate } from './migrations.js'

export interface PostgresOptions {
  url: string
  /** Connections at most (commits run one at a time; reads for the API beside them). */
  max?: number
  /** A connection that cannot be made within this fails the query that wanted it. */
  connectTimeoutMs?: number
}

/** A pool on the state store with its schema migrated; the caller ends it. */
export async function openPostgres(o: PostgresOptions, logger: Logger): Promise<pg.Pool> {
  const pool = new pg.Pool({
    connectionString: o.url,
    max: o.max ?? 4,
    connectionTimeoutMillis: o.connectTimeoutMs ?? 10_000,
    application_name: 'rulekeeper',
  })
  pool.on('error', (err) => logger.warn({ err: err.message }, 'a PostgreSQL connection of the state store failed'))
  try {
    const applied = await migrate(pool)
    if (applied.length > 0) logger.info({ versions: applied }, 'migrated the PostgreSQL state store')
  } catch (err) {
    await pool.end().catch(() => {})
    throw err
  }
  return pool
}
