// Collecting validation problems of a correlation `Detection` block: every problem at once, each
// with its path inside the file form, plus the small type checks the block's validators share.
// Values arrive as plain JSON parsed with the YAML 1.2 core schema, so types are checked here.
import type { DataPath, RuleProblem } from '../../rules/model.js'

export class ProblemList {
  readonly errors: RuleProblem[] = []
  readonly warnings: RuleProblem[] = []

  error(path: DataPath, message: string, code?: string): void {
    this.errors.push(code === undefined ? { path: [...path], message } : { path: [...path], message, code })
  }

  warning(path: DataPath, message: string, code?: string): void {
    this.warnings.push(code === undefined ? { path: [...path], message } : { path: [...path], message, code })
  }
}

/** How a value reads in a message: JSON, shortened, so a huge value cannot flood the output. */
export function describe(value: unknown): string {
  if (value === undefined) return 'nothing'
  let text: string
  try {
    text = JSON.stringify(value) ?? String(value)
  } catch {
    text = String(value)
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

/** Reports every key of `obj` not in `allowed`, naming it and the keys that are allowed. */
export function checkKeys(
  obj: Record<string, unknown>,
  allowed: readonly string[],
  path: DataPath,
  where: string,
  out: ProblemList,
): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) {
      out.error([...path, key], `unknown key "${key}" in ${where} (allowed: ${allowed.join(', ')})`)
    }
  }
}

/**
 * A positive integer (minutes or a count). Absent → undefined without a problem unless required;
 * present but wrong → a problem and undefined.
 */
export function positiveInteger(
  obj: Record<string, unknown>,
  key: string,
  path: DataPath,
  what: string,
  out: ProblemList,
  required = false,
): number | undefined {
  const value = obj[key]
  if (value === undefined) {
    if (required) out.error([...path, key], `${key} is required in ${what}`)
    return undefined
  }
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    out.error([...path, key], `${key} in ${what} must be a positive integer, got ${describe(value)}`)
    return undefined
  }
  return value
}

/** A non-empty string without surrounding spaces (ids and field names are compared exactly). */
export function nonEmptyString(
  obj: Record<string, unknown>,
  key: string,
  path: DataPath,
  what: string,
  out: ProblemList,
  required = true,
): string | undefined {
  const value = obj[key]
  if (value === undefined || value === null) {
    if (required) out.error([...path, key], `${key} is required in ${what}`)
    return undefined
  }
  if (typeof value !== 'string' || value.trim() === '') {
    out.error([...path, key], `${key} in ${what} must be a non-empty string, got ${describe(value)}`)
    return undefined
  }
  if (value !== value.trim()) {
    out.error([...path, key], `${key} in ${what} must not start or end with spaces, got ${describe(value)}`)
    return undefined
  }
  return value
}
