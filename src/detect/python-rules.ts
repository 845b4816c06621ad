// Python streaming rules in detection: the live compiler over an engine's `evaluateBatch` (the
// sandboxed pool, engine/python/live-detect.ts), and the alert fields of a match with Panther's
// semantics for the functions' outputs (pypanther's Rule.run in batch mode): title() else the
// DisplayName else the RuleID; dedup() else the title (alerts.md §2: then the rule id); severity()
// over `Severity` (DEFAULT: `Severity`); alert_context() else `{}`; description()/reference()/
// runbook() over the rule's fields when they return a non-empty string; destinations() as returned
// (routing reads it, alerts.md §4). A function that raises or returns the wrong type falls back
// like this too (the match stands, as in Panther), and is reported as a rule error of the record.
import type { FunctionOutcome, RecordOutcome, RuleEngine } from '../engine/engine.js'
import { indexContext } from '../service/rule-views.js'
import { MAX_DEDUP } from './grouping.js'
import type { Evaluation, LiveCompiler } from './live-rules.js'

/** The Python name of each reported function, for messages. */
const PYTHON_NAMES: Record<string, string> = { alertContext: 'alert_context', detection: 'rule' }

const nonEmpty = (f: FunctionOutcome | undefined) =>
  f && f.error === null && typeof f.output === 'string' && f.output !== '' ? f.output : undefined

export interface PythonRuleFields {
  id: string
  displayName: string
  /** The file's `Severity`, upper case. */
  severity: string
}

/** The Evaluation of one record from what the worker reported. */
export function pythonEvaluation(outcome: RecordOutcome, rule: PythonRuleFields): Evaluation {
  if (outcome === null) return { matched: false }
  if ('error' in outcome) return { error: outcome.error }
  const f = outcome.functions
  const errors = Object.entries(f)
    .filter(([, o]) => o.error !== null)
    .map(([name, o]) => {
      const fn = `${PYTHON_NAMES[name] ?? name}()`
      // the type checks name the function already ("severity() returned …")
      return o.error!.startsWith(`${fn} `) ? o.error! : `${fn}: ${o.error}`
    })
  const title = nonEmpty(f.title) ?? (rule.displayName || rule.id)
  const dedup = nonEmpty(f.dedup) ?? title
  const context = f.alertContext
  const alertContext =
    context && context.error === null && context.output !== null && typeof context.output === 'object'
      ? (context.output as Record<string, unknown>)
      : {}
  const destinations = f.destinations
  const out: Evaluation = {
    matched: true,
    title,
    dedup: dedup.length > MAX_DEDUP ? dedup.slice(0, MAX_DEDUP) : dedup,
    severity: nonEmpty(f.severity) ?? rule.severity,
    alertContext,
    // none when not defined or when it raised (not set: OutputIds, then severity route the alert)
    destinations: destinations && destinations.error === null ? destinations.output : undefined,
  }
  const description = nonEmpty(f.description)
  const reference = nonEmpty(f.reference)
  const runbook = nonEmpty(f.runbook)
  if (description !== undefined) out.description = description
  if (reference !== undefined) out.reference = reference
  if (runbook !== undefined) out.runbook = runbook
  if (errors.length > 0) out.errors = errors
  return out
}

/** The live compiler of an engine that evaluates batches (registered for the `python` kind). */
export function batchLiveCompiler(engine: Required<Pick<RuleEngine, 'evaluateBatch'>>): LiveCompiler {
  return (rule, index) => {
    const ctx = indexContext(index)
    const fields: PythonRuleFields = {
      id: rule.id,
      displayName: typeof rule.view.displayName === 'string' ? rule.view.displayName : '',
      severity: typeof rule.view.severity === 'string' ? rule.view.severity.toUpperCase() : 'INFO',
    }
    return {
      batch: async (events) => {
        const out = await engine.evaluateBatch(rule.file, ctx, events)
        if ('error' in out) return out
        return out.results.map((r) => pythonEvaluation(r, fields))
      },
    }
  }
}
