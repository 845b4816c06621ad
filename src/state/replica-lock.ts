// One process per replica name over PostgreSQL: a session-level advisory lock on `state.replica`,
// held by a connection of its own for the life of the process. A second process started with the
// same name is refused at its start: it would recover (and cut) the first one's open files in the
// shared events directory and share its detection checkpoint. A process that dies, SIGKILLed too,
// drops its connection and with it the lock, so its restart is not kept waiting; a host that
// vanishes is noticed by TCP keepalives (about a minute) and its lock dropped then. A lost connection
// (PostgreSQL restarted) is reported and the lock taken again on a new one; if another process took
// the name meanwhile, that is logged as an error every time it is tried (the operator must stop one).
// The lock's key is the two-integer form, a space of its own beside the one-bigint keys the
// detection commits lock groups with.
import { createHash } from 'node:crypto'
import pg from 'pg'
import { unavailable } from '../errors.js'
import type { Logger } from '../log.js'

/** The first key of every replica-name lock ("rkrp"). */
const REPLICA_LOCK_CLASS = 0x726b_7270
/** How long to wait before taking the lock again after the connection was lost. */
const RETRY_MS = 5_000

/** The second key: 32 bits of the name's SHA-256, signed. */
export const replicaLockKey = (replica: string) =>
  createHash('sha256').update(`replica\u0000${replica}`).digest().readInt32BE(0)

export interface ReplicaLock {
  /** Gives the name back (ends the connection). */
  release(): Promise<void>
}

async function tryLock(url: string, replica: string): Promise<pg.Client | null> {
  const client = new pg.Client({
    connectionString: url,
    application_name: `rulekeeper ${replica}`,
    // A host that vanished (a crash, a partition) is noticed within about a minute on both ends,
    // not after the kernels' two-hour default: the server then drops the lock, this side re-takes it.
    keepAlive: true,
    keepAliveInitialDelayMillis: 30_000,
    options: '-c tcp_keepalives_idle=30 -c tcp_keepalives_interval=10 -c tcp_keepalives_count=3',
  })
  client.on('error', () => {}) // reported through 'end' below
  await client.connect()
  try {
    const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', [
      REPLICA_LOCK_CLASS,
      replicaLockKey(replica),
    ])
    if (rows[0]?.ok) return client
  } catch (err) {
    await client.end().catch(() => {})
    throw err
  }
  await client.end().catch(() => {})
  return null
}

/** Holds the replica's name, or fails (503-class error with the reason) when another process holds it. */
export async function holdReplicaName(url: string, replica: string, logger: Logger): Promise<ReplicaLock> {
  let client: pg.Client | null
  try {
    client = await tryLock(url, replica)
  } catch (err) {
    throw unavailable(`the PostgreSQL state store cannot be opened: ${(err as Error).message}`)
  }
  if (!client)
    throw unavailable(
      `another process runs as replica ${replica} on this PostgreSQL state store: give each process its own state.replica (RULEKEEPER_REPLICA), or stop the other one`,
    )
  let released = false
  let timer: NodeJS.Timeout | null = null
  const watch = (c: pg.Client) =>
    c.once('end', () => {
      if (released) return
      logger.error({ replica }, 'the connection holding this replica name was lost; taking the name again')
      retry()
    })
  const retry = () => {
    timer = setTimeout(async () => {
      timer = null
      if (released) return
      try {
        const again = await tryLock(url, replica)
        if (released) {
          await again?.end().catch(() => {})
          return
        }
        if (again) {
          client = again
          watch(again)
          logger.info({ replica }, 'holds this replica name again')
          return
        }
        logger.error({ replica }, 'another process now runs as this replica: stop one of them')
      } catch (err) {
        logger.warn({ replica, err: (err as Error).message }, 'cannot take this replica name again yet')
      }
      retry()
    }, RETRY_MS)
    timer.unref()
  }
  watch(client)
  return {
    async release() {
      released = true
      if (timer) clearTimeout(timer)
      await client?.end().catch(() => {})
    },
  }
}
