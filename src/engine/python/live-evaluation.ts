// Python streaming rules in detection: the Python engine's `live` member over its `evaluateBatch`
// (the sandboxed pool, live-detect.ts), and the alert fields of a match with Panther's
// semantics for the functions' outputs (pypanther's Rule.run in batch mode): title() else the
// DisplayName else the RuleID; dedup() else the title (alerts.md §2: then the rule id); severity()
// over `Severity` (DEFAULT: `Severity`); alert_context() else `{}`; description()/reference()/
// runbook() over the rule's fields when they return a non-empty string; destinations() as returned
// (routing reads it, alerts.md §4). A function that raises or returns the wrong type falls back
// like this too (the match stands, as in Panther), and is reported as a rule error of the record.
// The outputs come from a process running rule code, which can write the result pipe itself: the
// runtime's type rules are checked again here (`checked`), so a forged frame cannot store a severity
// that is not one, a title that is not text (a long one is cut as the runtime cuts it), a context that is not an object or is nested past
// MAX_CONTEXT_DEPTH (which would make every later write or read of the alert throw), or destinations
// that are not names.
import { MAX_JSON_DEPTH, nestedWithin } from '../../json-depth.js'
import { SEVERITIES } from '../../rules/severity.js'
import type { RuleFile } from '../../rules/model.js'
import type { EngineContext, FunctionOutcome, LiveCompiler, RecordOutcome } from '../engine.js'
import { type BatchRecords, type Evaluation, MAX_DEDUP } from '../live.js'
import type { EvaluateBatch } from './live-detect.js'
import type { SparseOutcome } from './sparse-outcomes.js'

/** The Python name of each reported function, for messages. */
const PYTHON_NAMES: Record<string, string> = { alertContext: 'alert_context', detection: 'rule' }

/** What title() and dedup() may return, in characters (the runtime cuts longer ones to it). */
export const MAX_TITLE = 1000
/** How deeply alert_context() may nest (Python's json cannot write deeper under its recursion limit). */
export const MAX_CONTEXT_DEPTH = MAX_JSON_DEPTH

const isStringList = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string')

/** Why an output the runtime would never report is refused (null: it is well-typed). */
function refused(name: string, output: unknown): string | null {
  if (output === null) return null
  switch (name) {
    case 'title':
    case 'dedup':
    case 'description':
    case 'reference':
    case 'runbook':
      return typeof output === 'string' ? null : 'reported a value that is not a string'
    case 'severity':
      return typeof output === 'string' && (SEVERITIES as readonly string[]).includes(output)
        ? null
        : `reported a severity that is not one of ${SEVERITIES.join(', ')}`
    case 'alertContext':
      return typeof output !== 'object' || Array.isArray(output) || !nestedWithin(output, MAX_CONTEXT_DEPTH)
        ? `reported a value that is not an object nested at most ${MAX_CONTEXT_DEPTH} levels deep`
        : null
    case 'destinations':
      return output === 'SKIP' || isStringList(output) ? null : 'reported a value that is not a list of strings'
    default:
      return null
  }
}

/** The functions' outcomes with every ill-typed output turned into that function's error. */
function checked(functions: Record<string, FunctionOutcome>): Record<string, FunctionOutcome> {
  const out: Record<string, FunctionOutcome> = {}
  for (const [name, o] of Object.entries(functions)) {
    const why = o.error === null ? refused(name, o.output) : null
    out[name] = why === null ? o : { output: null, error: `${why} (a forged result?)` }
  }
  return out
}

/** `text` cut to `max` characters as Python counts them (code points). */
const cut = (text: string, max: number) => (text.length <= max ? text : [...text].slice(0, max).join(''))

const nonEmpty = (f: FunctionOutcome | undefined) =>
  f && f.error === null && typeof f.output === 'string' && f.output !== '' ? f.output : undefined

export interface PythonRuleFields {
  id: string
  displayName: string
  /** The file's `Severity`, upper case. */
  severity: string
}

/** "No match": one object for every record and rule (a chunk at 100 rules is 500,000 answers). */
const NO_MATCH: Evaluation = Object.freeze({ matched: false })

/** The Evaluation of one record from what the worker reported. */
export function pythonEvaluation(outcome: RecordOutcome, rule: PythonRuleFields): Evaluation {
  if (outcome === null) return NO_MATCH
  if ('error' in outcome) return { error: outcome.error }
  if (outcome.functions.detection?.output !== true) return { error: 'rule() reported a match that is not True' }
  const f = checked(outcome.functions)
  const errors = Object.entries(f)
    .filter(([, o]) => o.error !== null)
    .map(([name, o]) => {
      const fn = `${PYTHON_NAMES[name] ?? name}()`
      // the type checks name the function already ("severity() returned …")
      return o.error!.startsWith(`${fn} `) ? o.error! : `${fn}: ${o.error}`
    })
  const title = cut(nonEmpty(f.title) ?? (rule.displayName || rule.id), MAX_TITLE)
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

/** Only a batch's matches and errors (warm-detect.ts `evaluateSparse`). */
export type EvaluateSparse = (
  rule: RuleFile,
  ctx: EngineContext,
  events: BatchRecords,
  signal?: AbortSignal,
  onLate?: () => void,
) => Promise<SparseOutcome>

/**
 * The `live` member over a batch evaluation (the Python streaming rules' engine): `batch` answers
 * every record (scheduled rules' rows); `hits`, when given, only the matches and errors (detection).
 */
export function batchLive(evaluateBatch: EvaluateBatch, evaluateSparse?: EvaluateSparse): LiveCompiler {
  return (rule, ctx) => {
    const fields: PythonRuleFields = {
      id: rule.id,
      displayName: typeof rule.view.displayName === 'string' ? rule.view.displayName : '',
      severity: typeof rule.view.severity === 'string' ? rule.view.severity.toUpperCase() : 'INFO',
    }
    return {
      batch: async (events, signal, onLate) => {
        const out = await evaluateBatch(rule.file, ctx, events, signal, undefined, onLate)
        if ('error' in out) return out
        return out.results.map((r) => pythonEvaluation(r, fields))
      },
      ...(evaluateSparse
        ? {
            hits: async (events, signal, onLate) => {
              const out = await evaluateSparse(rule.file, ctx, events, signal, onLate)
              if ('error' in out) return out
              const at = [...out.outcomes.keys()].sort((a, b) => a - b)
              return { at, answers: at.map((i) => pythonEvaluation(out.outcomes.get(i)!, fields)) }
            },
          }
        : {}),
    }
  }
}
