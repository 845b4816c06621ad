// `POST /replay` (alerts.md §3, View Rules): `{ ruleIds?, from, to, revision? }` → the records, the
// matches and the alerts a run of those rules over the stored records of [from, to) would give,
// with the served revision or the given one. Stores and delivers nothing (replay.ts). At most
// `limits.concurrency` replays run at once (one more: 503 with Retry-After, estimated from the
// running ones' progress), each reads at most `limits.maxBytes` of stored records (more: 400), and
// a replay whose caller went away stops (docs/decisions.md, "Replay limits"). Times must be real calendar times:
// 2026-02-30 or 24:00 is a 400, not a day later.
import type Router from '@koa/router'
import { requirePermission } from '../api/auth.js'
import type { ApiState } from '../api/context.js'
import { readJsonBody } from '../api/json-body.js'
import type { TokenStore } from '../auth/token-store.js'
import { badRequest, RulekeeperError, validationFailed } from '../errors.js'
import { isPlainObject } from '../is-plain-object.js'
import type { RuleIndex } from '../rules/rule-index.js'
import { DEFAULT_REPLAY_LIMITS, type ReplayLimits } from './config.js'
import type { LiveCompiler } from './live-rules.js'
import { replay, ReplayRequestError } from './replay.js'

const RFC3339 = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.\d+)?(?:Z|[+-](\d\d):(\d\d))$/i

/** Milliseconds of an RFC 3339 time, or undefined (a day or hour that does not exist included). */
export function rfc3339Ms(v: unknown): number | undefined {
  const m = typeof v === 'string' ? RFC3339.exec(v) : null
  if (!m) return undefined
  const [year, month, day, hour, minute, second, offH, offM] = m.slice(1).map((x) => Number(x ?? 0))
  const days = new Date(Date.UTC(year!, month!, 0)).getUTCDate() // the last day of that month
  if (month! < 1 || month! > 12 || day! < 1 || day! > days || hour! > 23 || minute! > 59 || second! > 59)
    return undefined
  if (offH! > 23 || offM! > 59) return undefined
  const ms = Date.parse(v as string)
  return Number.isNaN(ms) ? undefined : ms
}

export function addReplayRoute(
  router: Router<ApiState>,
  deps: {
    tokens: TokenStore
    maxBodyBytes: number
    /** The log-reading loop: how much of a log file is durable (a replay reads no further). */
    detector: { durableLength(file: string): number }
    logsRoot: string
    catalog: { readonly index: RuleIndex }
    compilers: Readonly<Record<string, LiveCompiler>>
    /** The rules of another commit, or null when the repository has no such commit. */
    rulesAt: (revision: string) => Promise<RuleIndex | null>
    limits?: ReplayLimits
  },
): void {
  const limits = deps.limits ?? DEFAULT_REPLAY_LIMITS
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
      let index = deps.catalog.index
      if (typeof rev === 'string' && rev !== index.revision) {
        const at = await deps.rulesAt(rev)
        if (!at) throw validationFailed([{ path: '/revision', message: `no commit ${rev} in the rules repository` }])
        index = at
      }
      ctx.body = await replay({
        logsRoot: deps.logsRoot,
        index,
        compilers: deps.compilers,
        ruleIds: ids as string[] | undefined,
        fromMs: fromMs!,
        toMs: toMs!,
        durableLength: (file) => deps.detector.durableLength(file),
        maxBytes: limits.maxBytes,
        signal: abort.signal,
        progress: (read, total) => {
          slot.read = read
          slot.total = total
        },
      })
    } catch (err) {
      if (err instanceof ReplayRequestError) throw badRequest(err.message)
      // nobody reads the answer; a plain 4xx keeps it out of the server-error log
      if (abort.signal.aborted) throw badRequest('the client disconnected before the replay finished')
      throw err
    } finally {
      ctx.res.off('close', onClose)
      running.delete(slot)
    }
  })
}
