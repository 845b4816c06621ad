// Collects the problems of one file during validation: every error and warning with its path in
// the file form, bounded by `maxProblems` so a generated file with a million bad entries still
// yields a short answer (the overflow is summarised in one last problem).
import type { DataPath, RuleProblem } from '../../rules/model.js'
import { DEFAULT_LIMITS, quote, type EngineLimits } from './limits.js'

export class ProblemSink {
  readonly errors: RuleProblem[] = []
  readonly warnings: RuleProblem[] = []
  private omittedErrors = 0
  private omittedWarnings = 0

  constructor(readonly limits: EngineLimits = DEFAULT_LIMITS) {}

  /** `message` may be a function: long messages are then built only for problems that are kept. */
  error(path: DataPath, message: string | (() => string), code?: string): void {
    if (this.errors.length >= this.limits.maxProblems) {
      this.omittedErrors++
      return
    }
    const text = typeof message === 'string' ? message : message()
    this.errors.push(code === undefined ? { path: [...path], message: text } : { path: [...path], message: text, code })
  }

  warn(path: DataPath, message: string): void {
    if (this.warnings.length >= this.limits.maxProblems) this.omittedWarnings++
    else this.warnings.push({ path: [...path], message })
  }

  get failed(): boolean {
    return this.errors.length > 0
  }

  /** Quotes user text for a message within the configured bound. */
  quote(value: unknown): string {
    return quote(value, this.limits.maxQuotedLength)
  }

  result(): { errors: RuleProblem[]; warnings: RuleProblem[] } {
    const errors = [...this.errors]
    const warnings = [...this.warnings]
    if (this.omittedErrors > 0)
      errors.push({
        path: [],
        message: `${this.omittedErrors} more problems not listed (limit ${this.limits.maxProblems})`,
      })
    if (this.omittedWarnings > 0)
      warnings.push({
        path: [],
        message: `${this.omittedWarnings} more warnings not listed (limit ${this.limits.maxProblems})`,
      })
    return { errors, warnings }
  }
}

/** The JSON type name of a value, for "must be a list, not a string" messages. */
export function typeName(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'a list'
  if (typeof v === 'object') return 'a map'
  if (typeof v === 'string') return 'a string'
  if (typeof v === 'number') return 'a number'
  if (typeof v === 'boolean') return 'a boolean'
  return typeof v
}

const lowerIndexes = new WeakMap<readonly string[], Map<string, string>>()

/** "did you mean 'Key'?" for a key that differs from a known one only in case. */
export function caseHint(name: string, known: readonly string[]): string {
  // No known name is long; skipping long input keeps a 10 MB key from being lower-cased per name.
  if (name.length > 64) return ''
  let index = lowerIndexes.get(known)
  if (index === undefined) {
    index = new Map(known.map((k) => [k.toLowerCase(), k]))
    lowerIndexes.set(known, index)
  }
  const hit = index.get(name.toLowerCase())
  return hit === undefined ? '' : ` (did you mean '${hit}'?)`
}
