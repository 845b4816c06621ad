// The rules detection runs, per served revision: every enabled rule with a live evaluator, indexed
// by log type, compiled once per revision (the simple engine's compilation is cached by the rule's
// file object, so an unchanged rule is not compiled again when another one changes). Simple rules
// evaluate in-process, one record at a time; Python streaming rules evaluate whole batches
// (python-rules.ts, evaluate-records.ts).
import type { IndexedRule, RuleIndex } from '../rules/rule-index.js'
import type { MatchFields, RuleMeta } from './grouping.js'
import { simpleEvaluator } from './simple-evaluator.js'

/** One rule on one record: no match, a match with its alert fields, or a rule error. */
// `destinations`: what a Python rule's destinations() returned (undefined: no such function);
// `errors`: alert functions that raised on a match (the match stands, with Panther's fallbacks).
export type Evaluation =
  | { matched: false }
  | ({ matched: true } & MatchFields & { destinations?: unknown; errors?: string[] })
  | { error: string }

export type LiveEvaluator = (event: unknown) => Evaluation

/**
 * Many records at once (Python: one worker run per rule and batch): one Evaluation per record, in
 * order, or why the rule cannot run at all (then it is not run again at this revision).
 */
export type BatchEvaluator = (
  events: readonly Record<string, unknown>[],
  signal?: AbortSignal,
) => Promise<Evaluation[] | { error: string }>

/**
 * Builds the evaluator of one rule (in-process, or batched), or says why it cannot run; keyed by
 * kind. `index` is the revision the rule belongs to (its globals and data models).
 */
export type LiveCompiler = (
  rule: IndexedRule,
  index: RuleIndex,
) => LiveEvaluator | { batch: BatchEvaluator } | { error: string }

export type LiveRule = { meta: RuleMeta } & (
  | { evaluate: LiveEvaluator; batch?: undefined }
  | {
      evaluate?: undefined
      batch: BatchEvaluator
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

/**
 * Evaluators of the simple compiler, with the rule data they were compiled from: the detector may
 * evaluate these on its rule worker instead (simple-rule-worker.ts), which compiles the same data.
 */
export const offloadableData = new WeakMap<LiveEvaluator, Readonly<Record<string, unknown>>>()

export const simpleLiveCompiler: LiveCompiler = (rule) => {
  const evaluate = simpleEvaluator(rule.file.data)
  if (typeof evaluate === 'function') offloadableData.set(evaluate, rule.file.data)
  return evaluate
}

export const DEFAULT_COMPILERS: Readonly<Record<string, LiveCompiler>> = { simple: simpleLiveCompiler }

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
  compilers: Readonly<Record<string, LiveCompiler>>,
  select: (rule: IndexedRule) => boolean = (rule) => rule.view.enabled !== false,
): LiveIndex {
  const byLogType = new Map<string, LiveRule[]>()
  const broken: LiveIndex['broken'] = []
  const batched: LiveRule[] = []
  let rules = 0
  for (const rule of index.rules.values()) {
    const compile = compilers[rule.kind]
    if (!compile || !select(rule)) continue
    const meta = ruleMeta(rule, index.revision)
    let compiled: ReturnType<LiveCompiler>
    try {
      compiled = compile(rule, index)
    } catch (err) {
      compiled = { error: errorText(err) }
    }
    if ('error' in compiled) {
      broken.push({ meta, error: compiled.error })
      continue
    }
    rules++
    const live: LiveRule =
      typeof compiled === 'function' ? { meta, evaluate: compiled } : { meta, batch: compiled.batch }
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
