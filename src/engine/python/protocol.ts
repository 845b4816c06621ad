// The messages between the server and one sandboxed run (python/rulekeeper_runner.py): the runner's
// hello and its reports, one JSON object per line on fd 3, and the one job it is given on stdin.
// Kept in one place so both ends can be read side by side.

import type { StoredLines } from '../live.js'

export interface RunLimits {
  /** Wall clock per test, enforced by the server (sandbox-run.ts). */
  timeoutMs: number
  /** RLIMIT_AS of the child that runs rule code. */
  memoryBytes: number
  /** RLIMIT_CPU of the child (seconds, for all tests of one rule together). */
  cpuSeconds: number
  /** RLIMIT_FSIZE: the largest file rule code may write in its scratch directory. */
  fileBytes: number
  /** RLIMIT_NPROC: tasks (the interpreter and its threads) of one run, counted per uid (root: a uid per run) and user namespace (a user: one per run). */
  maxProcesses: number
  /** Everything one test may print (stdout and stderr together). */
  outputBytes: number
  /**
   * Detection: the wall clock of the whole run, all its records together (the per-record clock
   * restarts at each marker, so without it a rule sleeping just under `timeoutMs` per record would
   * hold its batch, and all detection, for records × timeoutMs). Enforced by the server.
   */
  runMs?: number
}

/** The start of the message of a run stopped by `runMs`. */
export const RUN_BUDGET_SPENT = 'used up the wall clock of its batch'

export interface ModuleSource {
  filename: string
  source: string
}

export interface JobRule extends ModuleSource {
  /** The module's name (the file stem). */
  module: string
  /** The file's `Severity`, what `severity()` returning DEFAULT stands for. */
  severity: string | null
  /** The file's `LogTypes`: the first is a test's log type when the test names none. */
  logTypes?: string[]
  /**
   * A policy: the module's `policy(resource)` is called instead of `rule(event)`, on each test's
   * resource (`JobTest.log`) as the plain mapping it is, and False is its alert (verdict.ts).
   */
  entry?: 'policy'
}

export interface JobTest {
  /** The test's event (a policy's: its resource). */
  log: unknown
  mocks: Array<{ objectName: unknown; returnValue: unknown }>
  /**
   * The event's log type (data models, §4): the `p_log_type` of its `Log`, else the test's `LogType`,
   * else the rule's first `LogTypes` entry. The runner applies the same order.
   */
  logType?: string
}

/** One data model as the runner builds it (python/panther_core/data_model.py). */
export interface JobDataModel {
  id: string
  /** The log types of the job's tests it serves (a subset of its `LogTypes`). */
  logTypes: string[]
  /** Its `.py` (repository path and source) when it has a `Filename`; Methods are its functions. */
  filename: string | null
  source: string | null
  mappings: Array<{ name: string; path?: string; method?: string }>
}

/** The one job of a run: a rule's tests, its import check, or nothing (the cost of a run alone). */
export type Job =
  | {
      op: 'test'
      rule: JobRule
      globals: Record<string, ModuleSource>
      dataModels?: JobDataModel[]
      tests: JobTest[]
      limits: RunLimits
    }
  | { op: 'check'; rule: JobRule; globals: Record<string, ModuleSource>; tests: []; limits: RunLimits }
  | { op: 'ping'; tests: []; limits: RunLimits }
  | DetectJob
  | ModulesJob
  | ServeJob

/** A module of a revision to compile and import (python/rulekeeper_modules.py). */
export interface JobModule extends ModuleSource {
  /** The module's name (the file stem). */
  module: string
  /** A function the module must define once imported (a rule's `rule`), or null. */
  requires: string | null
}

/**
 * The index-time check of a revision's Python files, all in one run: `tests` are indexes into
 * `modules`, one marker each (a run stopped on one module resumes after it in a fresh sandbox).
 */
export interface ModulesJob {
  op: 'modules'
  modules: JobModule[]
  globals: Record<string, ModuleSource>
  tests: number[]
  limits: RunLimits
}

/**
 * Live detection: one rule over many records (python/rulekeeper_runtime.py `run_detect`). `events`
 * is the JSON text of an array of records, written into the job line as it is (one serialization
 * shared by every rule's job over the same records); `tests` are indexes into it, one marker each.
 */
export interface DetectJob {
  op: 'detect'
  rule: JobRule
  globals: Record<string, ModuleSource>
  dataModels: JobDataModel[]
  events: string
  tests: number[]
  limits: RunLimits
}

/** A warm detection worker (python/rulekeeper_serve.py): batches follow on stdin, one line each. */
export interface ServeJob {
  op: 'serve'
  tests: []
  limits: RunLimits
}

/** One rule of a warm worker's batch, loaded the first time the worker sees its key. */
export interface ServeRule {
  k: number
  rule: JobRule
  dataModels: JobDataModel[]
}

/** What a warm worker evaluates: one rule (`k`) on the records `tests` of set `e` (null: all of them). */
export interface ServePlanItem {
  k: number
  e: string
  tests: number[] | null
  /** How many records that is. */
  n: number
  timeoutMs: number
  budgetMs: number
  maxStops: number
  /** In a worker shared with other rules: the most this rule may hold it in the batch (then it is evicted). */
  shareMs?: number
  /** With `shareMs`: the most one record may hold the worker (then the rule is evicted too). */
  shareRecordMs?: number
}

/**
 * One batch: rules to load, globals not sent before, the records of each set of log types, and the
 * plan. Written as a header line (rules, globals, plan, each set's number of block lines) and then,
 * block by block, one JSON array of records per set (warm-blocks.ts); the worker runs every rule of
 * the plan not done, in order, over a block before the next.
 */
export interface ServeBatch {
  load: ServeRule[]
  globals: Record<string, ModuleSource>
  /**
   * Set key → its records: an array (sent in blocks) or the JSON text of one (sent as it is, in
   * one line: the batch is then one block).
   */
  events: Map<string, string | readonly object[] | StoredLines>
  plan: ServePlanItem[]
}

/** One line the child reported about one test. */
export type RunEvent =
  | { t: 'start'; fn: string }
  | { t: 'fn'; fn: string; output: unknown; error: string | null; traceback?: string }
  | { t: 'import_error'; message: string; file: string | null; line: number | null }
  | { t: 'mock_error'; message: string }
  /** The test's `Log` is not an object (panther_analysis_tool fails such a test too). */
  | { t: 'log_error'; message: string }
  | { t: 'missing_module'; module: string; file: string | null; line: number | null }
  /** A `modules` job: the module does not compile, fails at import, or lacks its required function. */
  | {
      t: 'module_error'
      message: string
      /** Set when the module imports but lacks its entry function. */
      code?: 'PythonMissingRule'
      file: string | null
      line: number | null
      column: number | null
    }
  | { t: 'data_model_error'; message: string }
  | { t: 'module'; functions: string[] }
  | {
      t: 'end'
      stdout: string
      stderr: string
      outputChars: number
      outputExceeded: boolean
      /** The log type the test's event was given, and the DataModelID of its data model (none: null). */
      logType?: string | null
      dataModel?: string | null
    }
  /** Detection: a record that matched or raised; each function's [output, error]. */
  | { t: 'r'; f: Record<string, [unknown, string | null]> }

type RunStatus = 'ok' | 'timeout' | 'crashed' | 'output-limit' | 'internal'

/** What the worker says about one test (or about the import, for a `check`). */
export interface TestRecord {
  i: number
  status: RunStatus
  /** Why the run was stopped (status other than ok). */
  message: string | null
  events: RunEvent[]
  /** Output written below Python's sys.stdout (os.write, C code), as the worker caught it. */
  stdout: string
  stderr: string
  ms?: number
}

/** What the runner says once it is loaded and waiting for its job. */
export interface RunnerHello {
  t: 'hello'
  pid: number
  uid: number
  python: string
  executable: string
}
