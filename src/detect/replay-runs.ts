// Replay as the API runs it (api/replay-route.ts `Replays`): fair places (replay-queue.ts), the
// served rules or those of another commit, over the stored records up to their durable lengths; a
// request replay.ts cannot run (an empty range, unknown rules, too many bytes, groups or alert
// content) or an unknown commit is a 400. A preview runs one unsaved rule in place of the served
// one of its id (replay-preview.ts), keeping a few events of each alert.
import { badRequest, validationFailed } from '../errors.js'
import type { RuleIndex } from '../rules/rule-index.js'
import type { ReplayLimits } from './config.js'
import type { LiveEngines } from '../engine/engine.js'
import { type ReplayResult, replay, ReplayRequestError } from './replay.js'
import { ReplayQueue } from './replay-queue.js'
import { previewIndex } from './replay-preview.js'
import type { RuleFile } from '../rules/model.js'

/** Events kept per alert of a preview. */
export const PREVIEW_SAMPLE_EVENTS = 5

export interface ReplayRequest {
  ruleIds?: string[]
  fromMs: number
  toMs: number
  /** A full commit id; absent: the served revision. */
  revision?: string
  /** Keep the alerts' content (false: counts only, for a token without View Alerts). */
  content: boolean
  signal: AbortSignal
  progress: (read: number, total: number) => void
  /** A preview: this unsaved rule (checked already) is run, alone, over the served revision. */
  rule?: RuleFile
}

export function replayRuns(deps: {
  /** How much of a log file is durable (a replay reads no further; undefined: its size). */
  durableLength(file: string): number | undefined
  logsRoot: string
  /** `logsRoot` is a shared events directory: every replica's folder is read. */
  eachReplica?: boolean
  catalog: { readonly index: RuleIndex }
  engines: LiveEngines
  /** The rules of another commit, or null when the repository has no such commit. */
  rulesAt: (revision: string) => Promise<RuleIndex | null>
  limits: ReplayLimits
}): { limits: ReplayLimits; queue: ReplayQueue; run(req: ReplayRequest): Promise<ReplayResult> } {
  return {
    limits: deps.limits,
    queue: new ReplayQueue(deps.limits),
    async run(req) {
      let index = deps.catalog.index
      if (req.rule) index = previewIndex(index, req.rule, deps.engines)
      else if (req.revision !== undefined && req.revision !== index.revision) {
        const at = await deps.rulesAt(req.revision)
        if (!at)
          throw validationFailed([{ path: '/revision', message: `no commit ${req.revision} in the rules repository` }])
        index = at
      }
      try {
        return await replay({
          logsRoot: deps.logsRoot,
          eachReplica: deps.eachReplica,
          index,
          engines: deps.engines,
          ruleIds: req.rule ? [req.rule.id] : req.ruleIds,
          fromMs: req.fromMs,
          toMs: req.toMs,
          durableLength: deps.durableLength,
          maxBytes: deps.limits.maxBytes,
          maxGroups: deps.limits.maxGroups,
          maxContentBytes: deps.limits.maxContentBytes,
          content: req.content,
          signal: req.signal,
          progress: req.progress,
          sampleEvents: req.rule ? PREVIEW_SAMPLE_EVENTS : undefined,
        })
      } catch (err) {
        if (err instanceof ReplayRequestError) throw badRequest(err.message)
        throw err
      }
    },
  }
}
