// Every YAML file of a tree accounted for (detections.md §5.1): valid, invalid or unsupported, with
// its problems or the reason it is not served. The one place that decides it, read from an index,
// so `rulekeeper test`/`validate` and the server's `/status` cannot disagree about one tree.
import { KINDS } from './kinds/index.js'
import type { RuleProblem } from './model.js'
import type { FileRecord, RuleIndex } from './rule-index.js'
import { TurnBudget } from '../turn-budget.js'

type FileStatus = 'valid' | 'invalid' | 'unsupported'

export interface FileAccount {
  path: string
  status: FileStatus
  /** The file's `AnalysisType` (null when it has none or does not parse). */
  analysisType: string | null
  id: string | null
  problems: AccountedProblem[]
  /** Why an unsupported file is not served or tested (null otherwise). */
  reason: string | null
  /**
   * A valid file whose Python cannot run here (`not-run`: it imports a module the interpreter lacks)
   * or was not checked (`unchecked`: no sandbox, or the check stopped), with why; absent otherwise.
   */
  python?: { status: 'not-run' | 'unchecked'; problem: AccountedProblem }
}

/** A problem as reports show it; `file` when the line is in another file than the YAML (its `.py`). */
export interface AccountedProblem {
  message: string
  line: number | null
  column: number | null
  file?: string
}

export interface FileCounts {
  files: number
  valid: number
  invalid: number
  unsupported: number
  /** Files that are analysis files (have or should have an `AnalysisType`); 0 means nothing to check. */
  analysisFiles: number
  /** Valid files whose Python imports a module the interpreter lacks (their tests cannot run here). */
  notRun: number
  /** Valid files whose Python could not be checked (no sandbox, or the check was stopped). */
  unchecked: number
}

/**
 * The analysis types of the format (panther_analysis_tool's `AnalysisTypes`) that this build reads
 * but neither serves nor tests, with what it does with them. `rule` and the served kinds' types
 * are decided by the kinds (rules/kinds/).
 */
const READ_NOT_SERVED: Readonly<Record<string, string>> = {
  global: 'a global helper: read for the Python rules that import it, not served or tested itself',
  pack: 'packs are not served by this build',
  lookup_table: 'lookup tables are not served by this build',
  derived: 'derived detections are not served or tested by this build',
}

/**
 * Types read and checked but not served: accounted `valid` or `invalid` like rules (data models,
 * rules/data-models.ts; service/file-records.ts decides them before classifyUnserved).
 */
const READ_AND_CHECKED: readonly string[] = ['datamodel']

/** Keys by which a YAML file without a (valid) `AnalysisType` still looks like an analysis file. */
const ANALYSIS_KEYS = [
  'RuleID',
  'PolicyID',
  'GlobalID',
  'DataModelID',
  'QueryName',
  'PackID',
  'LookupName',
  'Detection',
  'Tests',
  'LogTypes',
  'ResourceTypes',
  'ScheduledQueries',
  'Severity',
  'DedupPeriodMinutes',
]

const NOT_ANALYSIS = 'not an analysis file (no AnalysisType key): ignored'

/** Every `AnalysisType` value of the format, served or not. */
export const ANALYSIS_TYPES: readonly string[] = [
  ...new Set([...KINDS.map((k) => k.analysisType), 'rule', ...READ_AND_CHECKED, ...Object.keys(READ_NOT_SERVED)]),
].sort()

/**
 * What a parsed YAML mapping that is not served as a rule is: `unsupported` (with the reason),
 * `invalid` (with the problem), or `checked` (a data model: its own check decides). Called for
 * files whose kind (rules/kinds/) did not claim them.
 */
export function classifyUnserved(
  data: Readonly<Record<string, unknown>> | undefined,
): { unsupported: string } | { problem: RuleProblem } | { checked: string } {
  if (data === undefined || !('AnalysisType' in data)) {
    const key = data && ANALYSIS_KEYS.find((k) => k in data)
    if (!key) return { unsupported: NOT_ANALYSIS }
    return { problem: { path: [], message: `AnalysisType is missing (the file has ${key}, like an analysis file)` } }
  }
  const type = data.AnalysisType
  if (typeof type === 'string' && READ_AND_CHECKED.includes(type)) return { checked: type }
  if (typeof type === 'string' && Object.hasOwn(READ_NOT_SERVED, type)) return { unsupported: READ_NOT_SERVED[type]! }
  // Both forms of `rule` are kinds (simple, python); one with neither key is neither.
  if (type === 'rule')
    return { problem: { path: [], message: 'a rule needs Detection (a YAML detection) or Filename (a Python rule)' } }
  return {
    problem: {
      path: ['AnalysisType'],
      message: `unknown AnalysisType ${JSON.stringify(type)}; the format knows ${ANALYSIS_TYPES.join(', ')}`,
    },
  }
}

export const accountedProblem = (p: RuleProblem): AccountedProblem => ({
  message: p.message,
  line: p.line ?? null,
  column: p.column ?? null,
  ...(p.file !== undefined ? { file: p.file } : {}),
})
const pub = accountedProblem

const cache = new WeakMap<RuleIndex, FileAccount[]>()

/**
 * The accounting of an index, built in steps: it yields every 512 files (and around the sort) so a
 * caller may give the event loop back there; returns the list, in byte order of path. Duplicate ids
 * and case collisions are problems of the files involved (as /status lists them).
 */
function* accountSteps(index: RuleIndex): Generator<void, FileAccount[]> {
  const invalid = new Map(index.invalidFiles().map((f) => [f.path, f]))
  yield
  // Byte order of the UTF-8 paths (as invalidFiles() sorts), each path encoded once.
  const keyed: Array<{ key: Buffer; f: FileRecord }> = []
  for (const f of index.files.values()) {
    keyed.push({ key: Buffer.from(f.path), f })
    if (keyed.length % 512 === 0) yield
  }
  keyed.sort((a, b) => Buffer.compare(a.key, b.key))
  yield
  const out: FileAccount[] = []
  for (const { f } of keyed) {
    out.push(account(f, invalid.get(f.path)?.errors))
    if (out.length % 512 === 0) yield
  }
  return out
}

/** Every YAML file of the index's tree, in byte order of path (memoized per index object: each publish makes a new one). */
export function accountFiles(index: RuleIndex): FileAccount[] {
  let out = cache.get(index)
  if (out) return out
  const steps = accountSteps(index)
  let step = steps.next()
  while (!step.done) step = steps.next()
  out = step.value
  cache.set(index, out)
  return out
}

/**
 * accountFiles for a large revision without holding the event loop: the same list (and the same
 * memo), built with the loop given back between slices (a push of 50,000 files, /status after it).
 */
export async function accountFilesInTurns(index: RuleIndex): Promise<FileAccount[]> {
  const cached = cache.get(index)
  if (cached) return cached
  const turns = new TurnBudget()
  const steps = accountSteps(index)
  let step = steps.next()
  while (!step.done) {
    await turns.pass()
    step = steps.next()
  }
  cache.set(index, step.value)
  return step.value
}

function account(f: FileRecord, problems: RuleProblem[] | undefined): FileAccount {
  const at = { analysisType: f.analysisType ?? null, id: f.id ?? null }
  if (problems && problems.length > 0)
    return { path: f.path, status: 'invalid', ...at, problems: problems.map(pub), reason: null }
  if (f.unsupported !== undefined)
    return { path: f.path, status: 'unsupported', ...at, problems: [], reason: f.unsupported }
  const valid: FileAccount = { path: f.path, status: 'valid', ...at, problems: [], reason: null }
  if (f.python?.notRun) valid.python = { status: 'not-run', problem: pub(f.python.notRun) }
  else if (f.python?.unchecked !== undefined)
    valid.python = {
      status: 'unchecked',
      problem: { message: `not checked: ${f.python.unchecked}`, line: null, column: null, file: f.python.path },
    }
  return valid
}

export function countFiles(files: readonly FileAccount[]): FileCounts {
  const c: FileCounts = {
    files: files.length,
    valid: 0,
    invalid: 0,
    unsupported: 0,
    analysisFiles: 0,
    notRun: 0,
    unchecked: 0,
  }
  for (const f of files) {
    c[f.status]++
    if (f.status !== 'unsupported' || f.reason !== NOT_ANALYSIS) c.analysisFiles++
    if (f.python?.status === 'not-run') c.notRun++
    else if (f.python?.status === 'unchecked') c.unchecked++
  }
  return c
}
