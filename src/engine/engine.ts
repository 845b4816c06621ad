// The seam between the rules service and the rule languages: one RuleEngine per kind checks a
// rule beyond its JSON schema (the detection language), runs its unit tests, and (`live`) gives
// detection its evaluator of stored records. Engines are pure with respect to storage: they get
// the rule in file form and a read-only view of its neighbours.
import type { RuleFile, RuleKind, RuleProblem, SupportFile } from '../rules/model.js'
import type { IndexedRule } from '../rules/rule-index.js'
import type { LiveCompiled } from './live.js'

/** What an engine may look up while checking or testing a rule. */
export interface EngineContext {
  /** Any rule of the current revision (after the change under test is applied). */
  findRule(id: string): RuleFile | undefined
  /** Non-rule analysis files (globals, queries, data models), by their id. */
  findSupport(id: string): SupportFile | undefined
  /** The enabled data model serving a log type (rules/data-models.ts), for `event.udm()`. */
  findDataModel?(logType: string): SupportFile | undefined
  /** Who runs the tests and until when (API requests): fairness between callers, cancellation. */
  run?: RunScope
}

export interface RunScope {
  /** The caller (a token id): Python jobs are queued per owner and served round robin. */
  owner?: string
  /** Aborted when the client goes away or the request's test time budget is used up. */
  signal?: AbortSignal
}

export interface FunctionOutcome {
  output: unknown
  error: string | null
}

export interface TestOutcome {
  name: string
  expected: boolean
  /** The rule's outcome; null when it errored before producing one. */
  actual: boolean | null
  /** true / false; null when the test could not run (never reported as a pass). */
  passed: boolean | null
  error: string | null
  /** Scheduled and simple rules: whether any function raised. */
  errored?: boolean
  /** Scheduled and simple rules: per function (`detection`, `title`, …) its output and error. */
  functions?: Record<string, FunctionOutcome>
  warnings?: string[]
}

/**
 * One record as a rule evaluated it in detection: no match (null), an error (rule() raised or
 * returned the wrong type, or the run evaluating it was stopped), or a match with the output and
 * error of each alert function the rule defines (`title`, `dedup`, `alertContext`, `severity`, …).
 */
export type RecordOutcome = null | { error: string } | { functions: Record<string, FunctionOutcome> }

/** A batch of records (Python's evaluateBatch): one outcome per record, in order, or why the rule cannot run at all. */
export type BatchOutcome = { results: RecordOutcome[] } | { error: string }

export interface CheckResult {
  errors: RuleProblem[]
  warnings: RuleProblem[]
}

/** A Python file of a revision, checked when the revision is indexed (service/python-check.ts). */
export interface ModuleUnit {
  /** The analysis file (YAML path) that names the module; verdicts are keyed by it. */
  key: string
  /** That file's `AnalysisType` (what the module must define follows from it: a rule's `rule`). */
  analysisType: string
  /** The module's repository path and source. */
  filename: string
  source: string
}

/** Where a problem of a module is, as Python reports it (the file may be a global helper it imports). */
export interface ModuleProblem {
  message: string
  /** `PythonMissingRule` when the module imports but lacks its entry function; else an import error. */
  code?: 'PythonMissingRule'
  file: string | null
  line: number | null
  column: number | null
}

/**
 * What checking one module found: it compiles and imports (`ok`); it does not (`invalid`); it
 * imports a module the interpreter lacks (`not-run`: the file is served, its tests cannot run
 * here); or it was not checked (`unchecked`: no sandbox, or the check run was stopped too often).
 */
export type ModuleVerdict =
  | { status: 'ok' }
  | { status: 'invalid'; problem: ModuleProblem }
  | { status: 'not-run'; module: string; problem: ModuleProblem }
  | { status: 'unchecked'; reason: string }

export interface RuleEngine {
  readonly kind: RuleKind
  /** Checks the rule's language content; every problem at once, each with its path. */
  check(rule: RuleFile, ctx: EngineContext): CheckResult
  /** Runs every test of the rule. Rejects with a RulekeeperError (e.g. 503) when it cannot run at all. */
  runTests(rule: RuleFile, ctx: EngineContext): Promise<TestOutcome[]>
  /**
   * Read-only fields derived from the rule and its neighbours at read time (e.g. a correlation
   * rule's `correlationRuleReferenceIds` and `logTypes`), and warnings that depend on them.
   */
  describe?(rule: RuleFile, ctx: EngineContext): { fields: Record<string, unknown>; warnings: RuleProblem[] }
  /**
   * Checks that need to run something (a Python module must import and define `rule`). Called on
   * API writes and by `rulekeeper validate`, after check() found nothing; rejects with a
   * RulekeeperError (503) when it cannot run at all.
   */
  checkAsync?(rule: RuleFile, ctx: EngineContext): Promise<RuleProblem[]>
  /**
   * Checks that run whenever a file of the kind is read into an index (a query's SQL bound by
   * DuckDB), after check() found nothing: what they find makes the file invalid. Never rejects.
   */
  checkIndexed?(rule: RuleFile, ctx: EngineContext): Promise<RuleProblem[]>
  /**
   * Detection: compiles an enabled rule to its live evaluator (engine/live.ts): in-process per
   * record (with what the rule worker needs to build it on its thread), or over batches of records
   * (Python streaming rules on the pool). Kinds detection does not run per record leave it out.
   */
  live?: LiveCompiler
  /**
   * Compiles and imports many modules at once (every Python file of a revision's changes), in one
   * sandboxed run where it can; resolves a verdict per unit key, never rejects.
   */
  checkModules?(units: readonly ModuleUnit[], ctx: EngineContext): Promise<Map<string, ModuleVerdict>>
  /**
   * Detection: rules of this kind not evaluated until they change (Python rules that kept
   * overrunning); `served` is a rule's file as served now (a changed one is no longer listed).
   */
  quarantined?(
    served: (ruleId: string) => RuleFile | undefined,
  ): Array<{ ruleId: string; since: string; reason: string }>
  /** Starts what the first request would otherwise wait for (the Python sandbox check, spares). */
  prepare?(): Promise<void>
  /** Releases what the engine holds (worker processes). */
  close?(): Promise<void>
}

/**
 * The engines this build has, keyed by the kind's name (rules/kinds/). Engines register themselves
 * from engine/registry.ts; what a missing one means is the kind's `missingEngine`.
 */
export type EngineRegistry = Partial<Record<RuleKind, RuleEngine>>

/**
 * An engine's `live` member: compiles one rule of a revision for detection. `ctx` looks up the
 * rest of that revision (globals, data models), as in check() and runTests().
 */
export type LiveCompiler = (rule: IndexedRule, ctx: EngineContext) => LiveCompiled

/** What detection reads of the engines: their `live` members, by kind (tests pass their own). */
export type LiveEngines = Readonly<Partial<Record<string, { readonly live?: LiveCompiler }>>>
