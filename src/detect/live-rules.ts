// The rules detection runs, per served revision: every enabled rule with a live evaluator, indexed
// by log type, compiled once per revision (the simple engine's compilation is cached by the rule's
// file object, so an unchanged rule is not compiled again when another one changes).
import { compileRule } from '../engine/simple/index.js'
import type { IndexedRule, RuleIndex } from '../rules/rule-index.js'
import type { MatchFields, RuleMeta } from './grouping.js'
import { MAX_DEDUP } from './grouping.js'

/** One rule on one record: no match, a match with its alert fields, or a rule error. */
// `destinations`: what a Python rule's destinations() returned (undefined: no such function).
export type Evaluation =
  | { matched: false }
  | ({ matched: true } & MatchFields & { destinations?: unknown })
  | { error: string }

export type LiveEvaluator = (event: unknown) => Evaluation

/** Builds the evaluator of one rule, or says why it cannot run; keyed by kind (Python rules join here). */
export type LiveCompiler = (rule: IndexedRule) => LiveEvaluator | { error: string }

export interface LiveRule {
  meta: RuleMeta
  evaluate: LiveEvaluator
}

export interface LiveIndex {
  revision: string | null
  byLogType: Map<string, LiveRule[]>
  /** Enabled rules that could not be compiled: one rule error each per revision. */
  broken: Array<{ meta: RuleMeta; error: string }>
  rules: number
}

const errorText = (err: unknown) => (err instanceof Error ? `${err.name}: ${err.message}` : String(err))

/** The answer of most evaluations, shared (frozen) rather than allocated per rule and record. */
export const NO_MATCH: Evaluation = Object.freeze({ matched: false })

export const simpleLiveCompiler: LiveCompiler = (rule) => {
  const { rule: compiled, errors } = compileRule(rule.file.data)
  if (compiled === null) return { error: `the rule is invalid: ${errors[0]?.message ?? 'unknown problem'}` }
  return (event) => {
    try {
      if (!compiled.matches(event)) return NO_MATCH
      const severity = compiled.severity(event)
      if (severity === null) return { error: 'the rule has no valid Severity' }
      const dedup = compiled.dedup(event)
      return {
        matched: true,
        title: compiled.title(event),
        dedup: dedup.length > MAX_DEDUP ? dedup.slice(0, MAX_DEDUP) : dedup,
        severity,
        alertContext: compiled.alertContext(event),
      }
    } catch (err) {
      return { error: errorText(err) }
    }
  }
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
  let rules = 0
  for (const rule of index.rules.values()) {
    const compile = compilers[rule.kind]
    if (!compile || !select(rule)) continue
    const meta = ruleMeta(rule, index.revision)
    let evaluate: LiveEvaluator | { error: string }
    try {
      evaluate = compile(rule)
    } catch (err) {
      evaluate = { error: errorText(err) }
    }
    if (typeof evaluate !== 'function') {
      broken.push({ meta, error: evaluate.error })
      continue
    }
    rules++
    for (const lt of meta.logTypes) {
      const list = byLogType.get(lt) ?? []
      list.push({ meta, evaluate })
      byLogType.set(lt, list)
    }
  }
  // A fixed order (by id) so matches of one record are written the same way every time.
  for (const list of byLogType.values()) list.sort((a, b) => (a.meta.id < b.meta.id ? -1 : 1))
  return { revision: index.revision, byLogType, broken, rules }
}
