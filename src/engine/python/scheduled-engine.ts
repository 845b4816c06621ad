// The RuleEngine for scheduled rules (Python): static checks in check() (InlineFilters included),
// the import check in checkPythonModule() (a worker run: it executes the module's top level), and
// runTests(), which applies the InlineFilters first, sends the tests they let through to one worker
// as one job (with the globals and data models they need) and turns each report into a §3.2 verdict.
// Created with `entry: 'policy'` it is the policies' engine: policy(resource) over each test's
// `Resource`, False the alert (protocol.ts JobRule.entry).
import { isRulekeeperError } from '../../errors.js'
import type { RuleFile, RuleProblem } from '../../rules/model.js'
import type { CheckResult, EngineContext, RuleEngine, TestOutcome } from '../engine.js'
import { jobDataModels } from './data-models.js'
import { collectGlobals } from './imports.js'
import { compileRuleFilters } from './inline-filters.js'
import type { JobRule, JobTest, RunLimits, TestRecord } from './protocol.js'
import { importProblem, testOutcome, type PythonTestOutcome } from './verdict.js'
import { abortReason } from './sandbox-run.js'
import { RunCancelled, type WorkerPool } from './worker-pool.js'

/** A Python module outside any scheduled rule file, e.g. the Python generated from a simple rule. */
interface ModuleUnderTest {
  source: string
  /** Shown in errors and tracebacks (default 'generated.py'). */
  filename?: string
  /** What severity() returning DEFAULT stands for. */
  severity?: string
}

export interface ScheduledEngine {
  engine: RuleEngine
  checkPythonModule(rule: RuleFile, ctx: EngineContext): Promise<RuleProblem[]>
  /** Runs tests (file form: Name, ExpectedResult, Log, Mocks) against any module, by §3.2. */
  runModuleTests(module: ModuleUnderTest, tests: unknown[], ctx: EngineContext): Promise<PythonTestOutcome[]>
}

export function moduleProblems(rule: RuleFile): RuleProblem[] {
  const filename = rule.data.Filename
  if (typeof filename !== 'string' || filename.trim() === '') {
    return [{ path: ['Filename'], message: 'Filename (the rule module, a .py file beside the rule) is required' }]
  }
  if (!filename.endsWith('.py')) return [{ path: ['Filename'], message: `Filename '${filename}' must name a .py file` }]
  if (typeof rule.pythonSource !== 'string') {
    return [
      {
        path: ['Filename'],
        message: `the rule module '${filename}' was not found beside the rule`,
        code: 'MissingPythonModule',
      },
    ]
  }
  return []
}

export function jobRule(rule: RuleFile): JobRule {
  const filename = String(rule.data.Filename)
  const dir = rule.path.includes('/') ? rule.path.slice(0, rule.path.lastIndexOf('/') + 1) : ''
  const base = filename.slice(filename.lastIndexOf('/') + 1)
  return {
    module: base.replace(/\.py$/, '').replace(/\W/g, '_') || 'rule',
    filename: rule.pythonPath ?? dir + filename,
    source: rule.pythonSource ?? '',
    severity: typeof rule.data.Severity === 'string' ? rule.data.Severity.toUpperCase() : null,
    logTypes: Array.isArray(rule.data.LogTypes)
      ? rule.data.LogTypes.filter((lt): lt is string => typeof lt === 'string')
      : [],
  }
}

interface TestSpec {
  name: string
  expected: unknown
  job: JobTest
}

/** A test whose event the InlineFilters reject: a non-match, rule() not called (§4). */
function filteredOut(name: string, expected: boolean): PythonTestOutcome {
  return {
    name,
    expected,
    actual: false,
    passed: !expected,
    error: expected
      ? 'expected a match (ExpectedResult: true) but the rule did not match (InlineFilters did not pass)'
      : null,
    errored: false,
    functions: { detection: { output: false, error: null } },
  }
}

function eventLogType(log: unknown): string | undefined {
  if (!log || typeof log !== 'object' || Array.isArray(log)) return undefined
  const own = (log as Record<string, unknown>).p_log_type
  return typeof own === 'string' && own !== '' ? own : undefined
}

/** What a module's tests feed its entry function: a rule's `Log`, a policy's `Resource`. */
type TestInput = 'Log' | 'Resource'

function testSpecs(rule: Pick<RuleFile, 'data'>, input: TestInput = 'Log'): TestSpec[] {
  const tests = Array.isArray(rule.data.Tests) ? (rule.data.Tests as unknown[]) : []
  const logTypes = rule.data.LogTypes
  const ruleLogType = Array.isArray(logTypes) && typeof logTypes[0] === 'string' ? logTypes[0] : undefined
  return tests.map((raw, i) => {
    const t = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>
    // The event's log type (data models key on it, §4): its own `p_log_type` (a rule on several log
    // types is tested with events of each), else the test's `LogType`, else the rule's first.
    const logType = eventLogType(t[input]) ?? (typeof t.LogType === 'string' ? t.LogType : ruleLogType)
    return {
      name: typeof t.Name === 'string' ? t.Name : `test ${i + 1}`,
      expected: t.ExpectedResult,
      job: {
        log: t[input] ?? {},
        mocks: Array.isArray(t.Mocks) ? (t.Mocks as Array<{ objectName: unknown; returnValue: unknown }>) : [],
        ...(logType !== undefined ? { logType } : {}),
      },
    }
  })
}

export function createScheduledEngine(pool: WorkerPool, limits: RunLimits, entry?: 'policy'): ScheduledEngine {
  const policy = entry === 'policy'
  const input: TestInput = policy ? 'Resource' : 'Log'
  const withEntry = (job: JobRule): JobRule => (policy ? { ...job, entry: 'policy' } : job)

  function check(rule: RuleFile, ctx: EngineContext): CheckResult {
    const filters = compileRuleFilters(rule.data)
    const errors = [...moduleProblems(rule), ...filters.errors]
    const warnings: RuleProblem[] = [...filters.warnings]
    for (const key of ['AlertTitle', 'AlertContext', 'DynamicSeverities', 'GroupBy']) {
      if (rule.data[key] === undefined || rule.data[key] === null) continue
      warnings.push({
        path: [key],
        message: `${key} is kept but not evaluated on a Python rule: the module's functions (title, alert_context, severity, dedup) decide the alert`,
        code: 'PythonRuleYamlAlertKey',
      })
    }
    const queries = Array.isArray(rule.data.ScheduledQueries) ? (rule.data.ScheduledQueries as unknown[]) : []
    queries.forEach((q, i) => {
      if (typeof q === 'string' && !ctx.findSupport(q)) {
        warnings.push({
          path: ['ScheduledQueries', i],
          message: `no scheduled query named '${q}' in this repository`,
          code: 'UnknownScheduledQuery',
        })
      }
    })
    testSpecs(rule, input).forEach((t, i) => {
      if (typeof t.expected !== 'boolean')
        errors.push({ path: ['Tests', i, 'ExpectedResult'], message: 'ExpectedResult must be true or false' })
      t.job.mocks.forEach((m, j) => {
        if (!m || typeof m !== 'object' || typeof m.objectName !== 'string' || m.objectName === '') {
          errors.push({
            path: ['Tests', i, 'Mocks', j, 'objectName'],
            message: 'objectName must be a non-empty string',
          })
        }
      })
    })
    return { errors, warnings }
  }

  async function runTests(rule: RuleFile, ctx: EngineContext): Promise<TestOutcome[]> {
    const specs = testSpecs(rule, input)
    if (specs.length === 0) return []
    const missing = moduleProblems(rule)
    if (missing.length > 0) {
      return specs.map((s) => ({
        name: s.name,
        expected: s.expected === true,
        actual: null,
        passed: false,
        error: missing[0]!.message,
        errored: true,
        functions: {},
      }))
    }
    const filters = compileRuleFilters(rule.data)
    if (filters.errors.length > 0) {
      const error = `InlineFilters are invalid: ${filters.errors[0]!.message}`
      return specs.map((s) => ({
        name: s.name,
        expected: s.expected === true,
        actual: null,
        passed: false,
        error,
        errored: true,
        functions: {},
      }))
    }
    const pass = filters.filtersPass
    if (pass === null) return runModule(withEntry(jobRule(rule)), specs, ctx)
    // Only the events the filters let through go to the worker; the others are non-matches.
    const runs = specs.map((s) => typeof s.expected !== 'boolean' || pass(s.job.log))
    const through = specs.filter((_, i) => runs[i])
    const ran = through.length > 0 ? await runModule(withEntry(jobRule(rule)), through, ctx) : []
    let next = 0
    return specs.map((s, i) => (runs[i] ? ran[next++]! : filteredOut(s.name, s.expected === true)))
  }

  async function runModuleTests(
    module: ModuleUnderTest,
    tests: unknown[],
    ctx: EngineContext,
  ): Promise<PythonTestOutcome[]> {
    const specs = testSpecs({ data: { Tests: tests } })
    if (specs.length === 0) return []
    const filename = module.filename ?? 'generated.py'
    const job: JobRule = {
      module: filename.replace(/^.*\//, '').replace(/\.py$/, '').replace(/\W/g, '_') || 'rule',
      filename,
      source: module.source,
      severity: module.severity?.toUpperCase() ?? null,
    }
    return runModule(job, specs, ctx)
  }

  async function runModule(job: JobRule, specs: TestSpec[], ctx: EngineContext): Promise<PythonTestOutcome[]> {
    let records: TestRecord[]
    const tests = specs.map((s) => s.job)
    const dataModels = jobDataModels(tests, job.logTypes ?? [], ctx)
    // A data model's module may import globals too.
    const sources = [job.source, ...dataModels.map((m) => m.source ?? '')].join('\n')
    try {
      records = await pool.run(
        {
          op: 'test',
          rule: job,
          globals: collectGlobals(sources, ctx),
          dataModels,
          tests,
          limits: { ...limits, cpuSeconds: limits.cpuSeconds * specs.length },
        },
        ctx.run,
      )
    } catch (err) {
      if (isRulekeeperError(err) || !(err instanceof RunCancelled)) throw err
      // Cancelled before it started (the client went away, or the request's budget ran out).
      return specs.map((s) => ({
        name: s.name,
        expected: s.expected === true,
        actual: null,
        passed: false,
        error: `not run: ${err.message}`,
        errored: true,
        functions: {},
      }))
    }
    const byIndex = new Map(records.map((r) => [r.i, r]))
    return specs.map((s, i) => {
      if (typeof s.expected !== 'boolean') {
        return {
          name: s.name,
          expected: false,
          actual: null,
          passed: null,
          error: 'ExpectedResult must be true or false',
          errored: false,
          functions: {},
        }
      }
      const record = byIndex.get(i)
      if (!record && ctx.run?.signal?.aborted) {
        return {
          name: s.name,
          expected: s.expected,
          actual: null,
          passed: false,
          error: `not run: ${abortReason(ctx.run.signal)}`,
          errored: true,
          functions: {},
        }
      }
      return testOutcome(s.name, s.expected, record, job.entry !== 'policy')
    })
  }

  async function checkPythonModule(rule: RuleFile, ctx: EngineContext): Promise<RuleProblem[]> {
    const missing = moduleProblems(rule)
    if (missing.length > 0) return missing
    const job = withEntry(jobRule(rule))
    let records: TestRecord[]
    try {
      records = await pool.run(
        { op: 'check', rule: job, globals: collectGlobals(job.source, ctx), tests: [], limits },
        ctx.run,
      )
    } catch (err) {
      if (isRulekeeperError(err) || !(err instanceof RunCancelled)) throw err
      return [
        { path: ['Filename'], message: `importing the rule module failed: ${err.message}`, code: 'PythonImportError' },
      ]
    }
    const problem = importProblem(records[0], job.filename, policy ? 'policy(resource)' : undefined)
    return problem ? [{ path: ['Filename'], ...problem }] : []
  }

  return { engine: { kind: policy ? 'policy' : 'scheduled', check, runTests }, checkPythonModule, runModuleTests }
}
