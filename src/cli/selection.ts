// Which rules and tests a `test`/`validate` run covers, with panther_analysis_tool's habits
// (detections.md §5.3): `--filter KEY=V1,V2` / `KEY!=V` on file keys, `--ignore-files GLOB,…`,
// `--test-names`, and `--minimum-tests` coverage. Pure: parsing and matching, no I/O.
import { ANALYSIS_TYPES } from '../rules/file-accounting.js'
import { fileKeysOf, RULE_KINDS } from '../rules/kinds/index.js'
import { UsageError } from './args.js'

export interface FileFilter {
  key: string
  values: ReadonlyArray<string | boolean>
  /** `KEY!=V`: the file must have none of the values. */
  inverted: boolean
}

/** Keys compared ignoring case (spec §5.3); everything else is compared exactly, as strings. */
const CASE_INSENSITIVE = new Set(['Severity', 'Tags'])

/** File keys a filter may name: every key of a served kind, plus the ids and types of the format. */
function filterKeys(): Map<string, string> {
  const keys = new Set<string>(['AnalysisType', 'RuleID', 'PolicyID', 'Filename', 'ResourceTypes'])
  for (const kind of RULE_KINDS) for (const k of fileKeysOf(kind)) keys.add(k)
  const byLower = new Map<string, string>([...keys].map((k) => [k.toLowerCase(), k]))
  byLower.set('id', 'RuleID') // the older `--filter id=RULE_ID`
  return byLower
}

const BOOLEAN_WORDS: Readonly<Record<string, boolean>> = {
  true: true,
  yes: true,
  y: true,
  on: true,
  '1': true,
  false: false,
  no: false,
  n: false,
  off: false,
  '0': false,
}

/** One `--filter` argument: `KEY=V1,V2` or `KEY!=V1,V2` (a usage error otherwise). */
export function parseFilter(arg: string): FileFilter {
  const m = /^([^=!]+)(!?)=(.+)$/.exec(arg)
  if (!m) throw new UsageError(`--filter takes KEY=VALUE[,VALUE…] or KEY!=VALUE[,VALUE…]; got ${JSON.stringify(arg)}`)
  const keys = filterKeys()
  const key = keys.get(m[1]!.trim().toLowerCase())
  if (!key)
    throw new UsageError(
      `--filter: ${JSON.stringify(m[1])} is not a key of a rule file (e.g. RuleID, Severity, LogTypes, Tags, Enabled, AnalysisType)`,
    )
  const raw = m[3]!
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '')
  if (raw.length === 0) throw new UsageError(`--filter ${arg}: no value`)
  let values: Array<string | boolean> = raw
  if (key === 'Enabled') {
    values = raw.map((v) => {
      const b = BOOLEAN_WORDS[v.toLowerCase()]
      if (b === undefined) throw new UsageError(`--filter Enabled takes true or false; got ${JSON.stringify(v)}`)
      return b
    })
  }
  if (key === 'AnalysisType') {
    const unknown = raw.find((v) => !ANALYSIS_TYPES.includes(v))
    if (unknown)
      throw new UsageError(
        `--filter AnalysisType: unknown type ${JSON.stringify(unknown)}; use ${ANALYSIS_TYPES.join(', ')}`,
      )
  }
  return { key, values, inverted: m[2] === '!' }
}

function norm(key: string, v: unknown): unknown {
  if (typeof v === 'number') return String(v)
  return CASE_INSENSITIVE.has(key) && typeof v === 'string' ? v.toLowerCase() : v
}

/**
 * Whether a file's data passes every filter (AND); within one filter the values are OR-ed, and a
 * list in the file (LogTypes, Tags) matches when any of its items does. A missing key matches no
 * value (so it fails `KEY=V` and passes `KEY!=V`).
 */
export function matchesFilters(data: Readonly<Record<string, unknown>>, filters: readonly FileFilter[]): boolean {
  for (const f of filters) {
    const v = data[f.key]
    const have = new Set((Array.isArray(v) ? v : v === undefined ? [] : [v]).map((x) => norm(f.key, x)))
    const hit = f.values.some((x) => have.has(norm(f.key, x)))
    if (hit === f.inverted) return false
  }
  return true
}

/**
 * `--ignore-files`: globs over repository paths (relative to DIR, `/`-separated). `*` and `?` stay
 * within a path segment, `**` crosses them; a pattern without `/` matches the file name at any
 * depth; a leading `./` is ignored, so PAT's plain relative paths work unchanged.
 */
export function ignoreMatcher(patterns: readonly string[]): (path: string) => boolean {
  const res = patterns.map(globToRegExp)
  return (p) => res.some((re) => re.test(p))
}

export function globToRegExp(glob: string): RegExp {
  const g = glob.trim().replace(/^(\.\/)+/, '')
  if (g === '') throw new UsageError('--ignore-files: empty pattern')
  let re = ''
  for (let i = 0; i < g.length; i++) {
    const c = g[i]!
    if (c === '*' && g[i + 1] === '*') {
      i++
      if (g[i + 1] === '/') {
        i++
        re += '(?:.*/)?'
      } else re += '.*'
    } else if (c === '*') re += '[^/]*'
    else if (c === '?') re += '[^/]'
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&')
  }
  return new RegExp(g.includes('/') ? `^${re}$` : `(?:^|/)${re}$`)
}

/** `--minimum-tests N`: why a rule's tests are not enough, or null (PAT's two checks). */
export function coverageProblem(tests: readonly unknown[], minimum: number): string | null {
  if (tests.length < minimum) return `insufficient test coverage: ${minimum} tests required, ${tests.length} found`
  if (minimum >= 2) {
    const expected = tests.map((t) =>
      t !== null && typeof t === 'object' ? (t as Record<string, unknown>).ExpectedResult : undefined,
    )
    if (!expected.includes(true) || !expected.includes(false))
      return 'insufficient test coverage: at least one test expecting true and one expecting false are required'
  }
  return null
}

/** Splits a comma-separated option value, trimming and dropping empty items. */
export function commaList(values: readonly string[]): string[] {
  return values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '')
}
