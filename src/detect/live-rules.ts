// The rules detection runs, per served revision: every enabled rule whose engine has a `live`
// member (engine/live.ts), indexed by log type, compiled once per revision (an engine may cache its
// compilation by the rule's file object, so an unchanged rule is not compiled again when another
// one changes). A rule evaluates in-process, one record at a time (on the rule worker when it
// carries offloadable data, rule-worker.ts), or in batches (evaluate-records.ts).
import type { LiveEngines } from '../engine/engine.js'
import type { BatchEvaluator, BatchHitsEvaluator, InProcessRule, Offload } from '../engine/live.js'
import type { IndexedRule, RuleIndex } from '../rules/rule-index.js'
import { indexContext } from '../service/rule-views.js'
import type { RuleMeta } from './grouping.js'

export type { BatchEvaluator, Evaluation, LiveEvaluator } from '../engine/live.js'

export type LiveRule = { meta: RuleMeta } & (
  | (InProcessRule & { batch?: undefined; hits?: undefined; offload?: Offload })
  | {
      evaluate?: undefined
      requires?: undefined
      offload?: undefined
      batch: BatchEvaluator
      /** The same answering only its matches and errors (detection's pass, evaluate-records.ts). */
      hits?: BatchHitsEvaluator
      /** Set when a batch could not run at all: the rule is skipped for the rest of this revision. */
      failed?: string
    }
)

export interface LiveIndex {
  revision: string | null
  byLogType: Map<string, LiveRule[]>
  /** Enabled rules that could not be compiled: one rule error each per revision. */
  broken: Array<{ meta: RuleMeta; error: string }>
  rules: number
  /** Rules evaluated in batches (Python), each listed once. */
  batched: LiveRule[]
}

const errorText = (err: unknown) => (err instanceof Error ? `${err.name}: ${err.message}` : String(err))

const str = (v: unknown) => (typeof v === 'string' ? v : '')
const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])
const posInt = (v: unknown, d: number) => (typeof v === 'number' && Number.isInteger(v) && v >= 1 ? v : d)

export function ruleMeta(rule: IndexedRule, revision: string | null): RuleMeta {
  const v = rule.view
  return {
    id: rule.id,
    kind: rule.kind,
    revision,
    logTypes: strings(v.logTypes),
    threshold: posInt(v.threshold, 1),
    dedupPeriodMinutes: posInt(v.dedupPeriodMinutes, 60),
    createAlert: v.createAlert !== false,
    summaryAttributes: strings(v.summaryAttributes),
    description: str(v.description),
    runbook: str(v.runbook),
    reference: str(v.reference),
    outputIds: strings(v.outputIDs),
  }
}

/** `select`: the rules to run, enabled or not (replay of named rules); default: the enabled ones. */
export function buildLiveIndex(
  index: RuleIndex,
  engines: LiveEngines,
  select: (rule: IndexedRule) => boolean = (rule) => rule.view.enabled !== false,
): LiveIndex {
  const byLogType = new Map<string, LiveRule[]>()
  const broken: LiveIndex['broken'] = []
  const batched: LiveRule[] = []
  const ctx = indexContext(index)
  let rules = 0
  for (const rule of index.rules.values()) {
    const compile = engines[rule.kind]?.live
    if (!compile || !select(rule)) continue
    const meta = ruleMeta(rule, index.revision)
    let compiled: ReturnType<typeof compile>
    try {
      compiled = compile(rule, ctx)
    } catch (err) {
      compiled = { error: errorText(err) }
    }
    if ('error' in compiled) {
      broken.push({ meta, error: compiled.error })
      continue
    }
    rules++
    const live: LiveRule =
      'batch' in compiled
        ? { meta, batch: compiled.batch, ...(compiled.hits ? { hits: compiled.hits } : {}) }
        : { meta, ...compiled }
    if (live.batch) batched.push(live)
    for (const lt of meta.logTypes) {
      const list = byLogType.get(lt) ?? []
      list.push(live)
      byLogType.set(lt, list)
    }
  }
  // A fixed order (by id) so matches of one record are written the same way every time.
  for (const list of byLogType.values()) list.sort((a, b) => (a.meta.id < b.meta.id ? -1 : 1))
  return { revision: index.revision, byLogType, broken, rules, batched }
}
