// A plan's backtest: the rules a change touches, replayed over the last days of stored events as the
// base revision has them and as the head would (detect/replay.ts: the same evaluators and grouping as
// live detection, nothing stored, within the replay limits), with each side's counts per rule and a
// few of the alerts each would raise. A limit reached skips the backtest with its reason.
import type { ReplayLimits } from '../detect/config.js'
import { type ReplayResult, replay, ReplayRequestError } from '../detect/replay.js'
import type { LiveEngines } from '../engine/engine.js'
import type { RuleIndex } from '../rules/rule-index.js'
import type { Backtest, BacktestCounts, BacktestRule } from './plan.js'

/** Alerts kept per rule and side. */
const SAMPLES = 3
const SAMPLE_KEYS = ['title', 'dedup', 'severity', 'eventCount', 'firstEventTime', 'lastEventTime'] as const

export interface BacktestInput {
  engines: LiveEngines
  logsRoot: string
  /** `logsRoot` is a shared events directory: every replica's folder is read. */
  eachReplica?: boolean
  durableLength?: (file: string) => number | undefined
  limits: ReplayLimits
  baseIndex: RuleIndex
  headIndex: RuleIndex
  /** Rules to run at the head (changed, added, affected) and at the base (changed, removed, affected). */
  headIds: readonly string[]
  baseIds: readonly string[]
  days: number
  fromMs: number
  toMs: number
  content: boolean
  signal?: AbortSignal
}

/** The ids of `ids` that detection can run at `index` (a live evaluator for their kind). */
function runnable(index: RuleIndex, engines: LiveEngines, ids: readonly string[]): string[] {
  return [...new Set(ids)].filter((id) => {
    const rule = index.rules.get(id)
    return rule !== undefined && engines[rule.kind]?.live !== undefined
  })
}

async function side(input: BacktestInput, index: RuleIndex, ids: string[]): Promise<ReplayResult | null> {
  if (ids.length === 0) return null
  return replay({
    logsRoot: input.logsRoot,
    eachReplica: input.eachReplica,
    index,
    engines: input.engines,
    ruleIds: ids,
    fromMs: input.fromMs,
    toMs: input.toMs,
    durableLength: input.durableLength,
    maxBytes: input.limits.maxBytes,
    maxGroups: input.limits.maxGroups,
    maxContentBytes: input.limits.maxContentBytes,
    content: input.content,
    signal: input.signal,
  })
}

function countsOf(result: ReplayResult | null): Map<string, BacktestCounts> {
  const out = new Map<string, BacktestCounts>()
  for (const r of result?.rules ?? []) out.set(r.ruleId, { matches: r.matches, alerts: r.alerts, errors: r.errors })
  return out
}

function samplesOf(result: ReplayResult | null, content: boolean): Map<string, Array<Record<string, unknown>>> {
  const out = new Map<string, Array<Record<string, unknown>>>()
  if (!result || !content) return out
  for (const alert of result.alerts()) {
    const list = out.get(String(alert.ruleId)) ?? []
    if (list.length >= SAMPLES) continue
    list.push(Object.fromEntries(SAMPLE_KEYS.filter((k) => k in alert).map((k) => [k, alert[k]])))
    out.set(String(alert.ruleId), list)
  }
  return out
}

export async function runBacktest(input: BacktestInput): Promise<Backtest> {
  const window = { from: new Date(input.fromMs).toISOString(), to: new Date(input.toMs).toISOString() }
  if (input.days === 0) return { ...window, records: 0, rules: [], skipped: 'backtestDays is 0' }
  const headIds = runnable(input.headIndex, input.engines, input.headIds)
  const baseIds = runnable(input.baseIndex, input.engines, input.baseIds)
  if (headIds.length === 0 && baseIds.length === 0)
    return { ...window, records: 0, rules: [], skipped: 'no changed rule runs in detection' }
  let base: ReplayResult | null
  let head: ReplayResult | null
  try {
    base = await side(input, input.baseIndex, baseIds)
    head = await side(input, input.headIndex, headIds)
  } catch (err) {
    if (err instanceof ReplayRequestError) return { ...window, records: 0, rules: [], skipped: err.message }
    throw err
  }
  const baseCounts = countsOf(base)
  const headCounts = countsOf(head)
  const baseSamples = samplesOf(base, input.content)
  const headSamples = samplesOf(head, input.content)
  const ids = [...new Set([...headIds, ...baseIds])].sort()
  const rules: BacktestRule[] = ids.map((ruleId) => ({
    ruleId,
    base: baseIds.includes(ruleId) ? (baseCounts.get(ruleId) ?? { matches: 0, alerts: 0, errors: 0 }) : null,
    head: headIds.includes(ruleId) ? (headCounts.get(ruleId) ?? { matches: 0, alerts: 0, errors: 0 }) : null,
    samples: { base: baseSamples.get(ruleId) ?? [], head: headSamples.get(ruleId) ?? [] },
  }))
  return { ...window, records: Math.max(base?.records ?? 0, head?.records ?? 0), rules }
}
