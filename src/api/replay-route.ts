// `POST /replay` (alerts.md §3, View Rules): `{ ruleIds?, from, to, revision? }` → the records, the
// matches, each rule's counts and — for a token with View Alerts too — the alerts a run of those
// rules over the stored records of [from, to) would give (detection's replay runs, handed over by
// main.ts; they store and deliver nothing). Replays take fair places (detect/replay-queue.ts), the answer
// is streamed as it is built (detect/replay-json.ts) and a replay whose caller went away stops
// (docs/decisions.md, "Replay limits", "Replay: bounded, fair, within its permission").
import { Readable } from 'node:stream'
import type Router from '@koa/router'
import type { TokenStore } from '../auth/token-store.js'
import { replayJsonChunks } from '../detect/replay-json.js'
import type { ReplayResult } from '../detect/replay.js'
import type { ReplayPlace, ReplayQueue } from '../detect/replay-queue.js'
import { badRequest, isRulekeeperError, validationFailed } from '../errors.js'
import { isPlainObject } from '../is-plain-object.js'
import { rfc3339Ms } from '../rfc3339.js'
import { requirePermission, tokenHas } from './auth.js'
import type { ApiState } from './context.js'
import type { RuleFile } from '../rules/model.js'
import type Koa from 'koa'
import { readJsonBody } from './json-body.js'

/** What the route needs of detection (detect/replay-runs.ts); `run` throws the 400s of a replay. */
export interface Replays {
  /** The fair places replays take (per token, round robin). */
  queue: ReplayQueue
  run(req: {
    ruleIds?: string[]
    /** A preview: this unsaved rule (checked already), alone, over the served revision. */
    rule?: RuleFile
    fromMs: number
    toMs: number
    revision?: string
    /** Keep the alerts' content (false: counts only). */
    content: boolean
    signal: AbortSignal
    progress: (read: number, total: number) => void
  }): Promise<ReplayResult>
}

/** The answer's chunks, letting other work run between them (the client's pace sets the rest). */
async function* answer(result: ReplayResult, alerts: boolean): AsyncGenerator<string> {
  for (const chunk of replayJsonChunks(result, { alerts })) {
    yield chunk
    await new Promise<void>((resolve) => setImmediate(resolve))
  }
}

export function addReplayRoute(
  router: Router<ApiState>,
  deps: { tokens: TokenStore; maxBodyBytes: number; replays: Replays },
): void {
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
    await streamReplay(ctx, deps.replays, {
      ruleIds: ids as string[] | undefined,
      fromMs: fromMs!,
      toMs: toMs!,
      revision: rev as string | undefined,
    })
  })
}

/**
 * Runs a replay (or a preview) in the token's fair place and streams its answer: alert content only
 * for a token with View Alerts; the caller going away (the connection closed before the answer)
 * stops the replay, or its wait, and frees its place.
 */
export async function streamReplay(
  ctx: Koa.ParameterizedContext<ApiState>,
  replays: Replays,
  req: { ruleIds?: string[]; rule?: RuleFile; fromMs: number; toMs: number; revision?: string },
): Promise<void> {
  // Alert content (titles, dedup strings, contexts, summaries of event values) is View Alerts'.
  const content = tokenHas(ctx, 'View Alerts')
  const abort = new AbortController()
  const onClose = () => {
    if (!ctx.res.writableFinished) abort.abort(new Error('the client disconnected'))
  }
  ctx.res.once('close', onClose)
  let place: ReplayPlace | undefined
  let streaming = false
  try {
    place = await replays.queue.acquire(ctx.state.token!.id, abort.signal)
    const result = await replays.run({ ...req, content, signal: abort.signal, progress: place.progress })
    // The place is held until the answer is written or the connection closes (Koa destroys the stream).
    const stream = Readable.from(answer(result, content), { objectMode: false })
    const held = place
    stream.once('close', () => {
      ctx.res.off('close', onClose)
      held.release()
    })
    ctx.type = 'application/json'
    ctx.body = stream
    streaming = true
  } catch (err) {
    // nobody reads the answer; a plain 4xx keeps it out of the server-error log
    if (abort.signal.aborted && !isRulekeeperError(err))
      throw badRequest('the client disconnected before the replay finished')
    throw err
  } finally {
    if (!streaming) {
      ctx.res.off('close', onClose)
      place?.release()
    }
  }
}
