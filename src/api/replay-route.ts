// `POST /replay` (alerts.md §3, View Rules): `{ ruleIds?, from, to, revision? }` → the records, the
// matches and the alerts a run of those rules over the stored records of [from, to) would give,
// with the served revision or the given one (detection's replay runs, handed over by main.ts; they
// store and deliver nothing). At most `limits.concurrency` replays run at once (one more: 503 with
// Retry-After, estimated from the running ones' progress), each reads at most `limits.maxBytes` of
// stored records (more: 400), and a replay whose caller went away stops (docs/decisions.md, "Replay
// limits"). Times must be real calendar times: 2026-02-30 or 24:00 is a 400, not a day later.
import type Router from '@koa/router'
import type { TokenStore } from '../auth/token-store.js'
import { badRequest, isRulekeeperError, RulekeeperError, validationFailed } from '../errors.js'
import { isPlainObject } from '../is-plain-object.js'
import { rfc3339Ms } from '../rfc3339.js'
import { requirePermission } from './auth.js'
import type { ApiState } from './context.js'
import { readJsonBody } from './json-body.js'

/** What the route needs of detection (detect/replay-runs.ts); `run` throws the 400s of a replay. */
export interface Replays {
  limits: { concurrency: number }
  run(req: {
    ruleIds?: string[]
    fromMs: number
    toMs: number
    revision?: string
    signal: AbortSignal
    progress: (read: number, total: number) => void
  }): Promise<unknown>
}

export function addReplayRoute(
  router: Router<ApiState>,
  deps: { tokens: TokenStore; maxBodyBytes: number; replays: Replays },
): void {
  const { limits } = deps.replays
  /** The replays running now: when each started and how far it has read. */
  const running = new Set<{ startedAt: number; read: number; total: number }>()
  /** Seconds until the first running replay should end (from its progress so far), 1 to 3600. */
  const retryAfter = () => {
    let soonest = Number.POSITIVE_INFINITY
    for (const r of running) {
      const elapsed = (Date.now() - r.startedAt) / 1000
      const left = r.read > 0 ? (elapsed * (r.total - r.read)) / r.read : 5
      soonest = Math.min(soonest, left)
    }
    return Math.min(3600, Math.max(1, Math.ceil(soonest)))
  }
  router.post('/replay', requirePermission(deps.tokens, 'View Rules'), readJsonBody(deps.maxBodyBytes), async (ctx) => {
    const body = ctx.state.body
    if (!isPlainObject(body)) throw badRequest('the body must be a JSON object: { "from": …, "to": … }')
    const errors: Array<{ path: string; message: string }> = []
    for (const k of Object.keys(body))
      if (!['ruleIds', 'from', 'to', 'revision'].includes(k))
        errors.push({ path: `/${k}`, message: `${k} is not a replay field (ruleIds, from, to, revision)` })
    const fromMs = rfc3339Ms(body.from)
    const toMs = rfc3339Ms(body.to)
    if (fromMs === undefined) errors.push({ path: '/from', message: 'from must be an RFC 3339 time' })
    if (toMs === undefined) errors.push({ path: '/to', message: 'to must be an RFC 3339 time' })
    const ids = body.ruleIds
    if (ids !== undefined && (!Array.isArray(ids) || ids.length > 1000 || !ids.every((x) => typeof x === 'string')))
      errors.push({ path: '/ruleIds', message: 'ruleIds must be a list of up to 1,000 rule ids' })
    const rev = body.revision
    if (rev !== undefined && (typeof rev !== 'string' || !/^[0-9a-f]{40}$/.test(rev)))
      errors.push({ path: '/revision', message: 'revision must be a full commit id (40 hex digits)' })
    if (errors.length) throw validationFailed(errors)
    if (running.size >= limits.concurrency) {
      const wait = retryAfter()
      throw new RulekeeperError(
        'Unavailable',
        `replay is busy: ${running.size} replay${running.size === 1 ? ' is' : 's are'} running (at most ${limits.concurrency} at once); retry in ${wait} s`,
        {},
        { 'Retry-After': String(wait) },
      )
    }
    const slot = { startedAt: Date.now(), read: 0, total: 0 }
    running.add(slot)
    // The caller going away (the connection closed before the answer) stops the replay.
    const abort = new AbortController()
    const onClose = () => {
      if (!ctx.res.writableFinished) abort.abort(new Error('the client disconnected'))
    }
    ctx.res.once('close', onClose)
    try {
      ctx.body = await deps.replays.run({
        ruleIds: ids as string[] | undefined,
        fromMs: fromMs!,
        toMs: toMs!,
        revision: rev as string | undefined,
        signal: abort.signal,
        progress: (read, total) => {
          slot.read = read
          slot.total = total
        },
      })
    } catch (err) {
      // nobody reads the answer; a plain 4xx keeps it out of the server-error log
      if (abort.signal.aborted && !isRulekeeperError(err))
        throw badRequest('the client disconnected before the replay finished')
      throw err
    } finally {
      ctx.res.off('close', onClose)
      running.delete(slot)
    }
  })
}
