// The size caps of what detection stores, applied where output enters the alert book (every path:
// simple and Python rules, alert functions, correlation runs): a rule error's text, an alert's
// title, dedup string, description, reference and runbook (Panther's 1,000 characters, cut as the Python runner cuts them: the first
// 985 and `... (truncated)`), and the alert context (Panther's 200 KiB, replaced by `{"_error": …}`).
import type { RuleErrorRecord } from './detection-ledger.js'
import type { MatchFields } from './grouping.js'

/** Longest title or dedup string stored, in characters (Panther's). */
export const MAX_ALERT_TEXT = 1000
/** Longest rule error text stored, in characters. */
export const MAX_ERROR_TEXT = 4096
/** Largest alert context stored, as JSON characters (Panther's 200 KiB). */
export const MAX_CONTEXT_CHARS = 204_800

const SUFFIX = '... (truncated)'

/** `text` cut to at most `max` characters: the head and `... (truncated)` (unchanged when short enough). */
export function capText(text: string, max: number): string {
  if (text.length <= max) return text
  let head = text.slice(0, max - SUFFIX.length)
  // never half a surrogate pair
  if (/[\uD800-\uDBFF]$/.test(head)) head = head.slice(0, -1)
  return head + SUFFIX
}

/** A rule error with its text capped (the same object when it is short enough). */
export function capError(e: RuleErrorRecord): RuleErrorRecord {
  return e.error.length <= MAX_ERROR_TEXT ? e : { ...e, error: capText(e.error, MAX_ERROR_TEXT) }
}

/**
 * The context, or Panther's `{"_error": …}` in its place when its JSON is longer than the cap, with
 * the JSON text of what it answers (the size check's serialization is the stored line's too).
 */
export function cappedContext(context: Record<string, unknown>): { context: Record<string, unknown>; text: string } {
  let text: string
  try {
    text = JSON.stringify(context)
  } catch {
    const error = { _error: 'alert_context could not be serialized' }
    return { context: error, text: JSON.stringify(error) }
  }
  if (text.length <= MAX_CONTEXT_CHARS) return { context, text }
  const error = {
    _error: `alert_context size is ${text.length} characters, bigger than maximum of ${MAX_CONTEXT_CHARS} characters`,
  }
  return { context: error, text: JSON.stringify(error) }
}

/** The context, capped as `cappedContext` caps it. */
export const capContext = (context: Record<string, unknown>): Record<string, unknown> => cappedContext(context).context

type AlertText = 'title' | 'dedup' | 'description' | 'reference' | 'runbook'

/** The alert fields of a match with its texts and context capped (the same object when within), and the context's JSON text. */
export function capMatch<M extends MatchFields>(m: M): { match: M; contextText: string } {
  let out = m
  for (const k of ['title', 'dedup', 'description', 'reference', 'runbook'] as const satisfies AlertText[]) {
    const v = m[k]
    if (typeof v === 'string' && v.length > MAX_ALERT_TEXT) {
      if (out === m) out = { ...m }
      out[k] = capText(v, MAX_ALERT_TEXT)
    }
  }
  const { context, text } = cappedContext(m.alertContext)
  if (context !== m.alertContext) {
    if (out === m) out = { ...m }
    out.alertContext = context
  }
  return { match: out, contextText: text }
}
