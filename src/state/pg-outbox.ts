// The delivery outbox in PostgreSQL (`deliveries`, migration 4), shared by replicas: a delivery is
// inserted once per (alert, destination) by whichever replica created or found the alert; each
// replica claims due pending deliveries per destination with `FOR UPDATE SKIP LOCKED` (never one
// another's), for a claim time after which a dead replica's claims return to the others. An
// attempt's outcome, its attempts and next time are written only while the claim is still its own.
// The idempotency key and the retry and backoff policy are the file store's (destinations/attempt.ts).
import { randomBytes } from 'node:crypto'
import type pg from 'pg'
import { type AlertViewOf, attemptDelivery, reportOutcome, settle } from '../destinations/attempt.js'
import type { DeliveryPolicy, Destination } from '../destinations/config.js'
import type { DeliveryState } from '../destinations/journal.js'
import type { DestinationMetrics } from '../destinations/metrics.js'
import type { DeliveryEntry, DeliveryOutbox } from '../destinations/outbox.js'
import { alertView, type Group } from '../detect/grouping.js'
import type { Logger } from '../log.js'

export interface PgOutboxOptions {
  db: pg.Pool
  replica: string
  destinations: readonly Destination[]
  policy: DeliveryPolicy
  alertView: AlertViewOf
  logger: Logger
  metrics: DestinationMetrics
  random?: () => number
  /** How often due deliveries are looked for (ms, default 1,000). */
  pollMs?: number
  /** How long a claim lasts (ms; default twice the destination's timeout plus 30 s). */
  claimMs?: number
}

interface Lane {
  dest: Destination
  inflight: number
  claiming: boolean
  /** A claim was asked for while one ran: claim again when it ends. */
  again: boolean
}

interface Claimed {
  alert_id: string
  attempts: number
  budget_start: string
}

const INSERT = `
  INSERT INTO deliveries AS d (alert_id, destination_id, state, attempts, budget_start, next_at)
  SELECT a, t, 'pending', 0, to_timestamp(b::double precision / 1000), to_timestamp(n::double precision / 1000)
  FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) AS u(a, t, b, n)
  ON CONFLICT (alert_id, destination_id) DO UPDATE SET alert_id = d.alert_id
  RETURNING alert_id, destination_id, state, attempts, last_error`

const CLAIM = `
  UPDATE deliveries d
  SET claimed_by = $1, claimed_until = now() + make_interval(secs => $2::double precision / 1000), updated_at = now()
  FROM (
    SELECT alert_id, destination_id FROM deliveries
    WHERE destination_id = $3 AND state = 'pending' AND next_at <= now()
      AND (claimed_until IS NULL OR claimed_until < now())
    ORDER BY next_at LIMIT $4
    FOR UPDATE SKIP LOCKED
  ) c
  WHERE d.alert_id = c.alert_id AND d.destination_id = c.destination_id
  RETURNING d.alert_id, d.attempts, (extract(epoch FROM d.budget_start) * 1000)::bigint AS budget_start`

const RECORD = `
  UPDATE deliveries
  SET state = $3, attempts = $4, last_error = $5, next_at = to_timestamp($6::double precision / 1000),
      claimed_by = NULL, claimed_until = NULL, updated_at = now()
  WHERE alert_id = $1 AND destination_id = $2 AND claimed_by = $7 AND state = 'pending'
  RETURNING alert_id`

const key = (alertId: string, destId: string) => `${alertId}\u0000${destId}`

export class PgOutbox implements DeliveryOutbox {
  /** This process's claims (a restart is another claimer: its old claims wait out their time). */
  readonly claimer: string
  private readonly db: pg.Pool
  private readonly lanes = new Map<string, Lane>()
  /** Entries of alerts this replica holds, updated in place as the alert shows them. */
  private readonly entries = new Map<string, DeliveryEntry>()
  private adds: Array<{ alertId: string; entry: DeliveryEntry; budgetStart: number; nextAt: number }> = []
  private flushing: Promise<void> | null = null
  private readonly stop = new AbortController()
  private readonly timer: NodeJS.Timeout
  private closed = false
  private polls = 0
  private stats: {
    counts: Map<string, Record<DeliveryState, number>>
    failed: ReturnType<DeliveryOutbox['failed']>
  } = { counts: new Map(), failed: [] }

  constructor(private readonly o: PgOutboxOptions) {
    this.db = o.db
    this.claimer = `${o.replica}/${process.pid}/${randomBytes(4).toString('hex')}`
    for (const dest of o.destinations) this.lanes.set(dest.id, { dest, inflight: 0, claiming: false, again: false })
    this.timer = setInterval(() => this.poll(), o.pollMs ?? 1000)
    this.timer.unref()
    this.poll()
  }

  add(alertId: string, entry: DeliveryEntry, budgetStart: number, nextAt: number): void {
    if (!this.lanes.has(entry.id) || this.closed) return
    this.entries.set(key(alertId, entry.id), entry)
    this.adds.push({ alertId, entry, budgetStart, nextAt })
    this.flushing ??= new Promise<void>((r) => setImmediate(r)).then(() => this.flush())
  }

  /** Writes the deliveries added since (new ones pending, known ones as stored), then looks for due ones. */
  private async flush(): Promise<void> {
    while (this.adds.length > 0) {
      const batch = this.adds
      this.adds = []
      try {
        const { rows } = await this.db.query<{
          alert_id: string
          destination_id: string
          state: DeliveryState
          attempts: number
          last_error: string | null
        }>(INSERT, [
          batch.map((b) => b.alertId),
          batch.map((b) => b.entry.id),
          batch.map((b) => Math.round(b.budgetStart)),
          batch.map((b) => Math.round(b.nextAt)),
        ])
        for (const r of rows)
          Object.assign(this.entries.get(key(r.alert_id, r.destination_id)) ?? {}, {
            state: r.state,
            attempts: r.attempts,
            lastError: r.last_error,
          })
      } catch (err) {
        // Not stored: the next start finds the alert's deliveries again (restored) and adds them.
        this.o.logger.error({ err, deliveries: batch.length }, 'cannot store deliveries in the outbox')
      }
    }
    this.flushing = null
    this.poll()
  }

  /** Claims due deliveries for every destination with room; refreshes the counts now and then. */
  private poll(): void {
    if (this.closed) return
    for (const lane of this.lanes.values()) void this.claim(lane)
    if (this.polls++ % 5 === 0) void this.refreshStats()
  }

  private async claim(lane: Lane): Promise<void> {
    if (lane.claiming) {
      lane.again = true
      return
    }
    const room = lane.dest.concurrency - lane.inflight
    if (room <= 0 || this.closed) return
    lane.claiming = true
    lane.again = false
    let rows: Claimed[] = []
    try {
      const claimMs = this.o.claimMs ?? 2 * lane.dest.timeoutMs + 30_000
      rows = (await this.db.query<Claimed>(CLAIM, [this.claimer, claimMs, lane.dest.id, room])).rows
    } catch (err) {
      this.o.logger.warn({ err, destination: lane.dest.id }, 'cannot claim deliveries from the outbox')
    } finally {
      lane.claiming = false
    }
    for (const r of rows) {
      lane.inflight++
      void this.attempt(lane, r).then(() => {
        lane.inflight--
        void this.claim(lane)
      })
    }
    // Room freed meanwhile, or a full claim (more may be due): claim again now, not at the next poll.
    if (lane.again || (rows.length === room && rows.length > 0)) void this.claim(lane)
  }

  /** One attempt of a claimed delivery; its outcome written while the claim is still ours. Never throws. */
  private async attempt(lane: Lane, c: Claimed): Promise<void> {
    const { policy, metrics, logger } = this.o
    const dest = lane.dest
    const attempts = c.attempts + 1
    const out = await attemptDelivery(dest, this.o.alertView, c.alert_id, attempts, this.stop.signal, metrics)
    if (this.closed) return // shutdown: the claim is released (close) and the delivery sent again
    const now = Date.now()
    const { state, nextAt, error } = settle(policy, out, attempts, Number(c.budget_start), now, this.o.random)
    try {
      const { rows } = await this.db.query(RECORD, [c.alert_id, dest.id, state, attempts, error, nextAt, this.claimer])
      if (rows.length === 0) {
        logger.warn(
          { alertId: c.alert_id, destinationId: dest.id },
          'a delivery claim ran out before its outcome was written; another replica sends it again',
        )
        return
      }
    } catch (err) {
      // Not written: the claim runs out and the delivery is sent again (at least once over exactly once).
      logger.error({ err, destination: dest.id }, 'cannot write a delivery outcome to the outbox')
      return
    }
    const entry = this.entries.get(key(c.alert_id, dest.id))
    if (entry) Object.assign(entry, { state, attempts, lastError: error })
    reportOutcome(logger, metrics, dest.id, c.alert_id, attempts, out, state, nextAt)
  }

  async redeliver(alertId: string): Promise<number> {
    const { rows } = await this.db.query<{ destination_id: string }>(
      `UPDATE deliveries SET state = 'pending', attempts = 0, budget_start = now(), next_at = now(),
         claimed_by = NULL, claimed_until = NULL, updated_at = now()
       WHERE alert_id = $1 AND state = 'failed' AND destination_id = ANY($2::text[])
       RETURNING destination_id`,
      [alertId, [...this.lanes.keys()]],
    )
    for (const r of rows) {
      const entry = this.entries.get(key(alertId, r.destination_id))
      if (entry) Object.assign(entry, { state: 'pending', attempts: 0 })
    }
    this.poll()
    return rows.length
  }

  private async refreshStats(): Promise<void> {
    try {
      const counts = new Map<string, Record<DeliveryState, number>>()
      for (const id of this.lanes.keys()) counts.set(id, { pending: 0, delivered: 0, failed: 0 })
      const byState = await this.db.query<{ destination_id: string; state: DeliveryState; n: number }>(
        'SELECT destination_id, state, count(*)::int AS n FROM deliveries GROUP BY 1, 2',
      )
      for (const r of byState.rows) {
        const c = counts.get(r.destination_id)
        if (c) c[r.state] = r.n
      }
      const failed = await this.db.query<{
        alert_id: string
        destination_id: string
        attempts: number
        last_error: string | null
      }>(
        `SELECT alert_id, destination_id, attempts, last_error FROM deliveries
         WHERE state = 'failed' ORDER BY updated_at DESC LIMIT 1000`,
      )
      this.stats = {
        counts,
        failed: failed.rows.map((r) => ({
          alertId: r.alert_id,
          destinationId: r.destination_id,
          attempts: r.attempts,
          lastError: r.last_error,
        })),
      }
    } catch (err) {
      this.o.logger.warn({ err }, 'cannot count the deliveries of the outbox')
    }
  }

  /** The dead letters as last counted (at most the newest 1,000). */
  failed(): ReturnType<DeliveryOutbox['failed']> {
    return this.stats.failed
  }

  counts(): Map<string, Record<DeliveryState, number>> {
    return this.stats.counts
  }

  /** Stops claiming, aborts the requests in flight and gives their claims back (sent again). */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    clearInterval(this.timer)
    this.stop.abort()
    await this.flushing
    await this.db
      .query(
        `UPDATE deliveries SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = $1 AND state = 'pending'`,
        [this.claimer],
      )
      .catch((err: unknown) => this.o.logger.warn({ err }, 'cannot give back the claims of the outbox'))
  }
}

/** An alert's view from the store (`alert_groups`, `alert_contexts`): a replica that did not create it. */
export async function storedAlertView(db: pg.Pool, id: string): Promise<Record<string, unknown> | undefined> {
  const { rows } = await db.query<{ state: string; context: string | null }>(
    `SELECT g.state, c.context FROM alert_groups g LEFT JOIN alert_contexts c ON c.group_id = g.id WHERE g.id = $1`,
    [id],
  )
  if (!rows[0]) return undefined
  const g = JSON.parse(rows[0].state) as Group
  if (!g.alert) return undefined
  const context = rows[0].context === null ? {} : (JSON.parse(rows[0].context) as Record<string, unknown>)
  return alertView({ ...g, alertContext: null }, context)
}
