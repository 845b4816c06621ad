// Sends deliveries: one lane per destination with its own concurrency and per-request timeout, so
// a slow or hanging receiver only fills its own lane (detection never waits on any of them: it only
// hands committed alerts over). An attempt's outcome is journaled before it counts: 2xx delivered;
// 4xx other than 429 (and redirects, never followed) failed at once; connection errors, timeouts,
// 429 and 5xx retried after an exponential backoff with jitter (or the receiver's Retry-After on
// 429/503) while the round's attempts and time budget last, then failed (a dead letter).
import type { Logger } from '../log.js'
import type { DeliveryPolicy, Destination } from './config.js'
import type { DeliveryJournal, DeliveryState, JournalLine } from './journal.js'
import { keyOf } from './journal.js'
import type { DestinationMetrics } from './metrics.js'
import { buildRequest } from './payload.js'

/** The delivery as the alert shows it (`destinations` of the alert shape): updated in place. */
export interface DeliveryEntry {
  id: string
  state: DeliveryState
  attempts: number
  lastError: string | null
}

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

/** An attempt's outcome; `status`: the receiver's HTTP status when it answered. */
type Outcome =
  | { ok: true; status: number }
  | { ok: false; retry: boolean; error: string; retryAfterMs: number | null; status?: number }

/** Retry-After: delay-seconds or an HTTP date. */
export function parseRetryAfter(v: string | null, now: number): number | null {
  if (!v) return null
  if (/^\d{1,9}$/.test(v.trim())) return Number(v.trim()) * 1000
  const t = Date.parse(v)
  return Number.isNaN(t) ? null : Math.max(0, t - now)
}

/**
 * The wait before attempt n+1 after n failed ones, jittered into [½, 1] of its base: the base
 * doubles from firstDelayMs, but is at least the round's budget left divided by 2^(attempts left
 * − 1), so the attempts left double their way to the budget's end instead of all being spent in
 * its first minutes; capped at maxDelayMs. With the defaults (10 attempts, 1 s, 10 min, 60 min)
 * the 8th attempt comes 12 to 24 minutes after the first: a receiver down for 10 minutes still
 * gets the alert. `budgetLeftMs` undefined: plain doubling.
 */
export function backoffMs(
  policy: DeliveryPolicy,
  attempts: number,
  random = Math.random,
  budgetLeftMs?: number,
): number {
  let base = policy.firstDelayMs * 2 ** Math.min(attempts - 1, 40)
  const left = policy.attempts - attempts
  if (budgetLeftMs !== undefined && left > 0) base = Math.max(base, budgetLeftMs / 2 ** Math.min(left - 1, 40))
  base = Math.min(policy.maxDelayMs, base)
  return Math.round(base / 2 + (base / 2) * random())
}

function describe(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } }
  if (e?.name === 'TimeoutError') return 'timed out'
  if (e?.name === 'AbortError') return 'aborted (shutdown)'
  // Never the URL (a Slack URL is a secret): only the error's code or class.
  return e?.cause?.code ? `connection failed: ${e.cause.code}` : `request failed: ${e?.name ?? 'Error'}`
}

export class Dispatcher {
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

  private async send(dest: Destination, alert: Record<string, unknown>, attempt: number): Promise<Outcome> {
    const req = buildRequest(dest, alert, attempt)
    const end = this.o.metrics.requestSeconds.startTimer({ destination: dest.id })
    // The attempt's timeout is a timer of our own, cleared when the attempt settles: Node 20's
    // AbortSignal.any() holds an AbortSignal.timeout() source weakly, so a collection before the
    // deadline left a hanging receiver's request hanging for ever (nodejs/node#57736), and with it
    // the destination's lane.
    const timeout = new AbortController()
    const timer = setTimeout(
      () => timeout.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
      dest.timeoutMs,
    )
    const onStop = () => timeout.abort(this.stop.signal.reason)
    if (this.stop.signal.aborted) onStop()
    else this.stop.signal.addEventListener('abort', onStop, { once: true })
    try {
      const res = await fetch(dest.url, {
        method: 'POST',
        headers: req.headers,
        body: req.body,
        redirect: 'manual',
        signal: timeout.signal,
      })
      await res.body?.cancel().catch(() => {})
      if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status }
      const error = `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`
      const retry = res.status === 429 || res.status >= 500
      const retryAfterMs =
        res.status === 429 || res.status === 503 ? parseRetryAfter(res.headers.get('retry-after'), Date.now()) : null
      return {
        ok: false,
        retry,
        error: res.status < 400 ? `${error} (redirects are not followed)` : error,
        retryAfterMs,
        status: res.status,
      }
    } catch (err) {
      return { ok: false, retry: true, error: describe(err), retryAfterMs: null }
    } finally {
      clearTimeout(timer)
      this.stop.signal.removeEventListener('abort', onStop)
      end()
    }
  }

  /** One attempt; answers whether the delivery is to be scheduled again (at `d.nextAt`). Never throws. */
  private async attempt(lane: Lane, d: Delivery): Promise<boolean> {
    const { policy, metrics } = this.o
    const dest = lane.dest
    // The view reads the alert's context from disk: a failed read is retried like a failed send.
    const alert = await this.o
      .alertView(d.alertId)
      .catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))))
    const attempts = d.entry.attempts + 1
    const out: Outcome =
      alert instanceof Error
        ? { ok: false, retry: true, error: `cannot read the alert: ${alert.message}`, retryAfterMs: null }
        : alert
          ? await this.send(dest, alert, attempts)
          : { ok: false, retry: false, error: 'the alert is unknown', retryAfterMs: null }
    if (this.closed) return false // shutdown: the journal still says pending, so the next start sends it
    const now = Date.now()
    let state: DeliveryState
    let nextAt = now
    if (out.ok) state = 'delivered'
    else if (!out.retry) state = 'failed'
    else {
      const budgetLeft = d.budgetStart + policy.budgetMinutes * 60_000 - now
      const wait = Math.min(
        policy.maxDelayMs,
        out.retryAfterMs ?? backoffMs(policy, attempts, this.o.random, Math.max(0, budgetLeft)),
      )
      nextAt = now + wait
      const over = attempts >= policy.attempts || nextAt > d.budgetStart + policy.budgetMinutes * 60_000
      state = over ? 'failed' : 'pending'
    }
    const error = out.ok ? null : out.error
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
    metrics.attempts.inc({ destination: dest.id, outcome: out.ok ? 'ok' : state === 'pending' ? 'retry' : 'fail' })
    // One line per attempt's outcome: ids, attempt, HTTP status or error, next retry (never the URL or body).
    const fields = {
      alertId: d.alertId,
      destinationId: dest.id,
      attempt: attempts,
      status: out.status ?? null,
      error,
    }
    if (state === 'delivered') {
      metrics.deliveries.inc({ destination: dest.id, outcome: 'delivered' })
      this.o.logger.info(fields, 'alert delivered')
    } else if (state === 'failed') {
      metrics.deliveries.inc({ destination: dest.id, outcome: 'failed' })
      this.o.logger.warn(
        { ...fields, nextRetryAt: null },
        'delivery failed: kept as a dead letter (POST /alerts/{id}/deliveries/retry or rulekeeper alerts redeliver)',
      )
    } else {
      this.o.logger.warn({ ...fields, nextRetryAt: new Date(nextAt).toISOString() }, 'delivery failed: will retry')
      d.nextAt = nextAt
      return true
    }
    return false
  }

  /** Stops sending: timers cleared, requests in flight aborted (they stay pending in the journal). */
  close(): void {
    this.closed = true
    this.stop.abort()
    for (const d of this.deliveries.values()) if (d.timer) clearTimeout(d.timer)
  }
}
