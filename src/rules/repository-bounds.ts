// What the rules repository may hold, and how much it holds: a file over `rules.maxFileBytes` is
// invalid and never read (only its size is); the repository's usage is the bytes of the files the
// index reads (every YAML file and the `.py` beside it that it names) and the number of rules
// served, against `rules.maxRepositoryBytes` and `rules.maxRules` (docs/decisions.md "Repository bounds").
import type { RuleProblem } from './model.js'

export interface RepositoryBounds {
  /** Bytes of one file the service reads (a YAML file, a `.py`). */
  maxFileBytes: number
  /** Bytes of every file the service reads, together. */
  maxRepositoryBytes: number
  /** Rules served (every kind). */
  maxRules: number
}

/** The defaults of config/default.yaml, for callers that run without a configuration (tests, tools). */
export const DEFAULT_BOUNDS: RepositoryBounds = {
  maxFileBytes: 262_144,
  maxRepositoryBytes: 134_217_728,
  maxRules: 10_000,
}

export const fmtBytes = (n: number) => n.toLocaleString('en-US')

/** The problem of a file too large to be read: it is invalid and its content is never read. */
export function fileTooLarge(bytes: number, max: number, what = 'the file'): RuleProblem {
  return {
    path: [],
    message: `${what} is ${fmtBytes(bytes)} bytes, larger than a rule file may be (rules.maxFileBytes: ${fmtBytes(max)} bytes); it was not read`,
  }
}

export interface RepositoryUsage {
  bytes: number
  rules: number
}

/** Usage of an index's revision: the bytes its file records account for and its served rules. */
export function usageOf(files: Iterable<{ bytes?: number }>, rules: number): RepositoryUsage {
  let bytes = 0
  for (const f of files) bytes += f.bytes ?? 0
  return { bytes, rules }
}

export interface QuotaExcess {
  /** The configuration key of the limit. */
  limit: 'rules.maxRepositoryBytes' | 'rules.maxRules'
  used: number
  max: number
  /** How far over the limit the usage is. */
  over: number
  message: string
}

/** The limits `usage` is over, with by how much (empty when within every limit). */
export function quotaExcess(usage: RepositoryUsage, bounds: RepositoryBounds): QuotaExcess[] {
  const out: QuotaExcess[] = []
  if (usage.bytes > bounds.maxRepositoryBytes) {
    const over = usage.bytes - bounds.maxRepositoryBytes
    out.push({
      limit: 'rules.maxRepositoryBytes',
      used: usage.bytes,
      max: bounds.maxRepositoryBytes,
      over,
      message: `the rule files hold ${fmtBytes(usage.bytes)} bytes, ${fmtBytes(over)} over rules.maxRepositoryBytes (${fmtBytes(bounds.maxRepositoryBytes)})`,
    })
  }
  if (usage.rules > bounds.maxRules) {
    const over = usage.rules - bounds.maxRules
    out.push({
      limit: 'rules.maxRules',
      used: usage.rules,
      max: bounds.maxRules,
      over,
      message: `the repository has ${fmtBytes(usage.rules)} rules, ${fmtBytes(over)} over rules.maxRules (${fmtBytes(bounds.maxRules)})`,
    })
  }
  return out
}
