// Sends deliveries: one lane per destination with its own concurrency and per-request timeout, so
// a slow or hanging receiver only fills its own lane (detection never waits on any of them: it only
// hands committed alerts over). An attempt's outcome is journaled before it counts: 2xx delivered;
// 4xx other than 429 (and redirects, never followed) failed at once; connection errors, timeouts,
// 429 and 5xx retried after an exponential backoff with jitter (or the receiver's Retry-After on
// 429/503) while the round's attempts and time budget last, then failed (a dead letter): attempt.ts.
// This is the file store's outbox (outbox.ts); PostgreSQL's is state/pg-outbox.ts.
import type { Logger } from '../log.js'
import { attemptDelivery, reportOutcome, settle } from './attempt.js'
import type { DeliveryPolicy, Destination } from './config.js'
import type { DeliveryJournal, DeliveryState, JournalLine } from './journal.js'
import { keyOf } from './journal.js'
import type { DestinationMetrics } from './metrics.js'
import type { DeliveryEntry, DeliveryOutbox } from './outbox.js'

export { backoffMs, parseRetryAfter } from './attempt.js'
export type { DeliveryEntry } from './outbox.js'

export interface Delivery {
  alertId: string
  entry: DeliveryEntry
  budgetStart: number
  nextAt: number
  timer: NodeJS.Timeout | null
  busy: boolean
}

interface Lane {
  dest: Destination
  ready: Delivery[]
  inflight: number
}

export class Dispatcher implements DeliveryOutbox {
  readonly deliveries = new Map<string, Delivery>()
  private readonly lanes = new Map<string, Lane>()
  private readonly stop = new AbortController()
  private closed = false

  constructor(
    private readonly o: {
      destinations: readonly Destination[]
      policy: DeliveryPolicy
      journal: DeliveryJournal
      /** The alert's current API shape (the webhook body), or undefined when it is unknown. */
      alertView: (id: string) => Promise<Record<string, unknown> | undefined>
      logger: Logger
      metrics: DestinationMetrics
      random?: () => number
    },
  ) {
    for (const dest of o.destinations) this.lanes.set(dest.id, { dest, ready: [], inflight: 0 })
  }

  /** Takes over a delivery (from a new alert or from the journals at start); pending ones are scheduled. */
  add(alertId: string, entry: DeliveryEntry, budgetStart: number, nextAt: number): void {
    const key = keyOf(alertId, entry.id)
    if (this.deliveries.has(key)) return
    const d: Delivery = { alertId, entry, budgetStart, nextAt, timer: null, busy: false }
    this.deliveries.set(key, d)
    if (entry.state === 'pending') this.schedule(d)
  }

  /** Failed deliveries of the alert start a new round (same idempotency key); answers how many. */
  async redeliver(alertId: string): Promise<number> {
    const again: Delivery[] = []
    for (const dest of this.o.destinations) {
      const d = this.deliveries.get(keyOf(alertId, dest.id))
      if (d && d.entry.state === 'failed' && !d.busy) again.push(d)
    }
    const now = Date.now()
    await Promise.all(again.map((d) => this.o.journal.append(this.line(d, 'pending', 0, d.entry.lastError, now, now))))
    for (const d of again) {
      d.entry.state = 'pending'
      d.entry.attempts = 0
      d.budgetStart = now
      d.nextAt = now
      this.schedule(d)
    }
    return again.length
  }

  failed(): Array<{ alertId: string; destinationId: string; attempts: number; lastError: string | null }> {
    const out = []
    for (const d of this.deliveries.values())
      if (d.entry.state === 'failed')
        out.push({
          alertId: d.alertId,
          destinationId: d.entry.id,
          attempts: d.entry.attempts,
          lastError: d.entry.lastError,
        })
    return out
  }

  counts(): Map<string, Record<DeliveryState, number>> {
    const out = new Map<string, Record<DeliveryState, number>>()
    for (const id of this.lanes.keys()) out.set(id, { pending: 0, delivered: 0, failed: 0 })
    for (const d of this.deliveries.values()) {
      const c = out.get(d.entry.id)
      if (c) c[d.entry.state]++
    }
    return out
  }

  private line(d: Delivery, s: DeliveryState, n: number, e: string | null, b: number, at: number): JournalLine {
    return { a: d.alertId, d: d.entry.id, s, n, e, b, at }
  }

  private schedule(d: Delivery): void {
    const lane = this.lanes.get(d.entry.id)
    if (!lane || this.closed) return
    const wait = d.nextAt - Date.now()
    if (wait <= 0) {
      lane.ready.push(d)
      this.pump(lane)
      return
    }
    d.timer = setTimeout(() => {
      d.timer = null
      lane.ready.push(d)
      this.pump(lane)
    }, wait)
    d.timer.unref()
  }

  private pump(lane: Lane): void {
    while (!this.closed && lane.inflight < lane.dest.concurrency && lane.ready.length > 0) {
      const d = lane.ready.shift() as Delivery
      if (d.busy || d.entry.state !== 'pending') continue
      lane.inflight++
      d.busy = true
      void this.attempt(lane, d).then((again) => {
        d.busy = false
        lane.inflight--
        if (again) this.schedule(d)
        this.pump(lane)
      })
    }
  }

  /** One attempt; answers whether the delivery is to be scheduled again (at `d.nextAt`). Never throws. */
  private async attempt(lane: Lane, d: Delivery): Promise<boolean> {
    const { policy, metrics } = this.o
    const dest = lane.dest
    const attempts = d.entry.attempts + 1
    const out = await attemptDelivery(dest, this.o.alertView, d.alertId, attempts, this.stop.signal, metrics)
    if (this.closed) return false // shutdown: the journal still says pending, so the next start sends it
    const now = Date.now()
    const { state, nextAt, error } = settle(policy, out, attempts, d.budgetStart, now, this.o.random)
    try {
      await this.o.journal.append(this.line(d, state, attempts, error, d.budgetStart, nextAt))
    } catch (err) {
      // Not durable: keep it pending in memory and try again later (at least once over exactly once).
      this.o.logger.error({ err, destination: dest.id }, 'cannot write the delivery journal')
      d.nextAt = now + policy.firstDelayMs
      return true
    }
    d.entry.attempts = attempts
    d.entry.lastError = error
    d.entry.state = state
    reportOutcome(this.o.logger, metrics, dest.id, d.alertId, attempts, out, state, nextAt)
    if (state !== 'pending') return false
    d.nextAt = nextAt
    return true
  }

  /** Stops sending: timers cleared, requests in flight aborted (they stay pending in the journal). */
  close(): void {
    this.closed = true
    this.stop.abort()
    for (const d of this.deliveries.values()) if (d.timer) clearTimeout(d.timer)
  }
}
