// The explicit bounds of the simple-rule engine. Each is a constant here so that a hostile or
// broken file (1,000-deep nesting, 10 MB strings, millions of path segments) ends in located
// problems instead of a stack overflow or a hang; callers may pass other values in `EngineLimits`.

export interface EngineLimits {
  /** Deepest nesting of match expressions (combinators, list comprehensions) accepted. */
  maxDepth: number
  /** Most segments in one KeyPath / DeepKey. */
  maxPathSegments: number
  /** Most problems reported for one file; the rest are summarised in one last problem. */
  maxProblems: number
  /** Longest rendered alert title, in characters (Unicode code points). */
  maxTitleLength: number
  /** Longest quoted user text inside a problem message. */
  maxQuotedLength: number
}

export const DEFAULT_LIMITS: Readonly<EngineLimits> = Object.freeze({
  maxDepth: 64,
  maxPathSegments: 256,
  maxProblems: 200,
  maxTitleLength: 1000,
  maxQuotedLength: 80,
})

/** Quotes user text for a message, cut so that a 10 MB string never lands in a response. */
export function quote(value: unknown, max: number = DEFAULT_LIMITS.maxQuotedLength): string {
  let text: string
  if (typeof value === 'string') text = value
  else {
    try {
      text = JSON.stringify(value) ?? String(value)
    } catch {
      text = String(value)
    }
  }
  if (text.length > max) text = `${text.slice(0, max)}…(${text.length} characters)`
  return typeof value === 'string' ? `'${text}'` : text
}
