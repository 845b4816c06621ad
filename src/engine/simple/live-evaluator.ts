// The live evaluator of one simple rule from its file data: no match, a match with its alert
// fields, or a rule error. The simple engine's `live` member (live.ts) builds it in-process and on
// the rule worker alike, so a record gets the same answer on either thread.
import { type Evaluation, type LiveEvaluator, MAX_DEDUP } from '../live.js'
import { compileRule } from './rule.js'

const errorText = (err: unknown) => (err instanceof Error ? `${err.name}: ${err.message}` : String(err))

/** The answer of most evaluations, shared (frozen) rather than allocated per rule and record. */
export const NO_MATCH: Evaluation = Object.freeze({ matched: false })

export function simpleEvaluator(data: Readonly<Record<string, unknown>>): LiveEvaluator | { error: string } {
  const { rule: compiled, errors } = compileRule(data)
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
