// One delivery attempt and what it leads to, the same for every outbox (the file journal's
// dispatcher.ts, PostgreSQL's state/pg-outbox.ts): the alert's view read and POSTed (payload.ts)
// under the destination's timeout; 2xx delivered; 4xx other than 429 (and redirects, never
// followed) failed at once; connection errors, timeouts, 429 and 5xx retried after an exponential
// backoff with jitter (or the receiver's Retry-After on 429/503) while the round's budget lasts.
import type { Logger } from '../log.js'
import type { DeliveryPolicy, Destination } from './config.js'
import type { DeliveryState } from './journal.js'
import type { DestinationMetrics } from './metrics.js'
import { buildRequest } from './payload.js'

/** An attempt's outcome; `status`: the receiver's HTTP status when it answered. */
export type Outcome =
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

/** The alert's current API shape (the webhook body), or undefined when it is unknown. */
export type AlertViewOf = (id: string) => Promise<Record<string, unknown> | undefined>

/** Attempt number `attempt` of the alert to the destination; never throws. `stop` aborts it (shutdown). */
export async function attemptDelivery(
  dest: Destination,
  alertView: AlertViewOf,
  alertId: string,
  attempt: number,
  stop: AbortSignal,
  metrics: DestinationMetrics,
): Promise<Outcome> {
  // The view reads the alert's context from the store: a failed read is retried like a failed send.
  const alert = await alertView(alertId).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))))
  if (alert instanceof Error)
    return { ok: false, retry: true, error: `cannot read the alert: ${alert.message}`, retryAfterMs: null }
  if (!alert) return { ok: false, retry: false, error: 'the alert is unknown', retryAfterMs: null }
  return send(dest, alert, attempt, stop, metrics)
}

async function send(
  dest: Destination,
  alert: Record<string, unknown>,
  attempt: number,
  stop: AbortSignal,
  metrics: DestinationMetrics,
): Promise<Outcome> {
  const req = buildRequest(dest, alert, attempt)
  const end = metrics.requestSeconds.startTimer({ destination: dest.id })
  // The attempt's timeout is a timer of our own, cleared when the attempt settles: Node 20's
  // AbortSignal.any() holds an AbortSignal.timeout() source weakly, so a collection before the
  // deadline left a hanging receiver's request hanging for ever (nodejs/node#57736), and with it
  // the destination's lane.
  const timeout = new AbortController()
  const timer = setTimeout(
    () => timeout.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
    dest.timeoutMs,
  )
  const onStop = () => timeout.abort(stop.reason)
  if (stop.aborted) onStop()
  else stop.addEventListener('abort', onStop, { once: true })
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
    stop.removeEventListener('abort', onStop)
    end()
  }
}

/** The delivery's state after attempt number `attempts` ended so, and when the next one is due. */
export function settle(
  policy: DeliveryPolicy,
  out: Outcome,
  attempts: number,
  budgetStart: number,
  now: number,
  random?: () => number,
): { state: DeliveryState; nextAt: number; error: string | null } {
  if (out.ok) return { state: 'delivered', nextAt: now, error: null }
  if (!out.retry) return { state: 'failed', nextAt: now, error: out.error }
  const end = budgetStart + policy.budgetMinutes * 60_000
  const wait = Math.min(
    policy.maxDelayMs,
    out.retryAfterMs ?? backoffMs(policy, attempts, random, Math.max(0, end - now)),
  )
  const nextAt = now + wait
  return { state: attempts >= policy.attempts || nextAt > end ? 'failed' : 'pending', nextAt, error: out.error }
}

/** The metrics and the one log line of an attempt's recorded outcome (never the URL or body). */
export function reportOutcome(
  logger: Logger,
  metrics: DestinationMetrics,
  destinationId: string,
  alertId: string,
  attempt: number,
  out: Outcome,
  state: DeliveryState,
  nextAt: number,
): void {
  metrics.attempts.inc({ destination: destinationId, outcome: out.ok ? 'ok' : state === 'pending' ? 'retry' : 'fail' })
  const fields = { alertId, destinationId, attempt, status: out.status ?? null, error: out.ok ? null : out.error }
  if (state === 'delivered') {
    metrics.deliveries.inc({ destination: destinationId, outcome: 'delivered' })
    logger.info(fields, 'alert delivered')
  } else if (state === 'failed') {
    metrics.deliveries.inc({ destination: destinationId, outcome: 'failed' })
    logger.warn(
      { ...fields, nextRetryAt: null },
      'delivery failed: kept as a dead letter (POST /alerts/{id}/deliveries/retry or rulekeeper alerts redeliver)',
    )
  } else logger.warn({ ...fields, nextRetryAt: new Date(nextAt).toISOString() }, 'delivery failed: will retry')
}
