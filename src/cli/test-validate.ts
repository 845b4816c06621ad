// `rulekeeper test [DIR]` and `rulekeeper validate [DIR]` (detections.md §5): load a directory as the
// server reads a revision, account for every YAML file (rules/file-accounting.ts, as /status does),
// check the selected rules (validate) and run their tests (test). Exit 0 all good, 1 otherwise, 2 usage.
import fs from 'node:fs'
import path from 'node:path'
import type { EngineRegistry, TestOutcome } from '../engine/engine.js'
import { closeEngines, createEngineRegistry, DEFAULT_PYTHON } from '../engine/registry.js'
import { loadServiceConfig } from '../config-sections.js'
import { parseDestinationConfig } from '../destinations/config.js'
import { unknownOutputIdWarnings } from '../destinations/routing.js'
import { accountFiles, countFiles } from '../rules/file-accounting.js'
import { fieldsOf, isRuleKind, RULE_KINDS } from '../rules/kinds/index.js'
import type { RuleKind, RuleProblem } from '../rules/model.js'
import type { FileRecord, RuleIndex } from '../rules/rule-index.js'
import { loadDirectory } from '../service/directory-loader.js'
import { indexContext } from '../service/rule-views.js'
import { runTests } from '../service/rule-tests.js'
import { parseArgs, UsageError } from './args.js'
import { printReport } from './report-human.js'
import type { Problem, RuleReport, RunReport, RunSummary } from './run-report.js'
import { commaList, coverageProblem, ignoreMatcher, matchesFilters, parseFilter, type FileFilter } from './selection.js'

const HELP = (cmd: 'test' | 'validate') => `Usage: rulekeeper ${cmd} [DIR] [options]

${cmd === 'test' ? 'Runs the unit tests of every rule under DIR (default .), disabled rules too.' : 'Loads and checks every rule file under DIR (default .) without running tests.'}
Every .yml/.yaml file under DIR (hidden folders, __pycache__ and node_modules aside) is accounted
for as valid, invalid or unsupported.

Options:
  --json                       one JSON document on stdout (files, rules, summary)
  --filter KEY=V1,V2           only rules whose file key KEY has one of the values (RuleID,
                               Severity, LogTypes, Tags, Enabled, AnalysisType, …); repeat to AND;
                               Severity and Tags ignore case
  --filter KEY!=V1,V2          only rules whose KEY has none of the values
  --kind ${RULE_KINDS.join('|')}
  --skip-disabled              leave out rules with Enabled: false
  --ignore-files GLOB,…        leave these files out entirely (paths relative to DIR; * ? **)
  --show-failures-only         human output: only failures and invalid files; unsupported ones counted
  --config FILE                the service configuration (as RULEKEEPER_CONFIG): an OutputIds entry
                               naming none of its destinations is a warning (not a failure)${
                                 cmd === 'test'
                                   ? `
  --test-names NAME,…          run only the tests with these names
  --minimum-tests N            a rule with fewer than N tests fails; N >= 2 also needs a test
                               expecting true and one expecting false`
                                   : ''
                               }

Exit code: 0 all good; 1 a test failed or did not run, a file is invalid, nothing to check, or the
filters select nothing; 2 usage error.
`

const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])

const pub = (p: RuleProblem): Problem => ({ message: p.message, line: p.line ?? null, column: p.column ?? null })

interface Options {
  cmd: 'test' | 'validate'
  dir: string
  json: boolean
  kind?: RuleKind
  filters: FileFilter[]
  skipDisabled: boolean
  ignore: string[]
  testNames: string[]
  minimumTests: number
  failuresOnly: boolean
  /** `--config`: the ids of the configured destinations (undefined: OutputIds are not checked). */
  destinationIds?: ReadonlySet<string>
  /** `--config`: its rules.maxFileBytes (else the default): a file over it is invalid, not read. */
  maxFileBytes?: number
}

/** The destination ids of a config file, read as `serve` reads it; the secrets' variables need not be set. */
function configuredDestinationIds(file: string, env: Record<string, string | undefined>): ReadonlySet<string> {
  if (!fs.existsSync(file) || !fs.statSync(file).isFile()) throw new UsageError(`--config: ${file} is not a file`)
  const config = loadServiceConfig({ ...env, RULEKEEPER_CONFIG: file }) as unknown as Record<string, unknown>
  return new Set(parseDestinationConfig(config, env, { resolveEnv: false }).destinations.map((d) => d.id))
}

function parseOptions(cmd: 'test' | 'validate', argv: string[], env: Record<string, string | undefined>): Options {
  const valued = ['kind', 'config', ...(cmd === 'test' ? ['minimum-tests'] : [])]
  const repeatable: Record<string, RegExp | null> = {
    filter: /^[A-Za-z][\w-]*!?=/,
    'ignore-files': null,
    ...(cmd === 'test' ? { 'test-names': null } : {}),
  }
  const args = parseArgs(argv, valued, ['json', 'skip-disabled', 'show-failures-only'], repeatable)
  if (args.positionals.length > 1) throw new UsageError('at most one DIR')
  const dir = path.resolve(args.positionals[0] ?? '.')
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new UsageError(`${dir} is not a directory`)
  const kind = args.options.kind
  if (kind !== undefined && !isRuleKind(kind))
    throw new UsageError(`--kind must be ${RULE_KINDS.slice(0, -1).join(', ')} or ${RULE_KINDS[RULE_KINDS.length - 1]}`)
  const min = args.options['minimum-tests']
  if (min !== undefined && (typeof min !== 'string' || !/^\d{1,4}$/.test(min)))
    throw new UsageError('--minimum-tests takes a whole number (0 or more)')
  return {
    cmd,
    dir,
    json: args.options.json === true,
    kind: kind as RuleKind | undefined,
    filters: (args.lists.filter ?? []).map(parseFilter),
    skipDisabled: args.options['skip-disabled'] === true,
    ignore: commaList(args.lists['ignore-files'] ?? []),
    testNames: commaList(args.lists['test-names'] ?? []),
    minimumTests: min === undefined ? 0 : Number(min),
    failuresOnly: args.options['show-failures-only'] === true,
    destinationIds:
      typeof args.options.config === 'string'
        ? configuredDestinationIds(path.resolve(args.options.config), env)
        : undefined,
    maxFileBytes:
      typeof args.options.config === 'string'
        ? (
            loadServiceConfig({ ...env, RULEKEEPER_CONFIG: path.resolve(args.options.config) }) as {
              rules: { maxFileBytes: number }
            }
          ).rules.maxFileBytes
        : undefined,
  }
}

async function runDirectory(
  cmd: 'test' | 'validate',
  argv: string[],
  env: Record<string, string | undefined>,
): Promise<{ code: number; report: RunReport; options: Options }> {
  const options = parseOptions(cmd, argv, env)
  const engines = createEngineRegistry({
    python: { ...DEFAULT_PYTHON, command: env.RULEKEEPER_PYTHON || DEFAULT_PYTHON.command, serverEnv: env },
  })
  try {
    const index = await loadDirectory(options.dir, engines, ignoreMatcher(options.ignore), options.maxFileBytes)
    return { ...(await runWithEngines(options, index, engines)), options }
  } finally {
    await closeEngines(engines)
  }
}

/** What filters can see of a file: its data when it was read as a rule, else its id and type. */
function dataOf(f: FileRecord): Readonly<Record<string, unknown>> {
  return f.rule?.file.data ?? { RuleID: f.id, AnalysisType: f.analysisType }
}

async function runWithEngines(
  o: Options,
  index: RuleIndex,
  engines: EngineRegistry,
): Promise<{ code: number; report: RunReport }> {
  const ctx = indexContext(index)
  const files = accountFiles(index)
  const counts = countFiles(files)
  const summary: RunSummary = {
    files: counts.files,
    valid: counts.valid,
    invalid: counts.invalid,
    unsupported: counts.unsupported,
    pythonNotRun: counts.notRun,
    pythonUnchecked: counts.unchecked,
    rules: 0,
    failedChecks: 0,
    insufficientTests: 0,
    tests: 0,
    passed: 0,
    failed: 0,
    notRun: 0,
  }
  const rules: RuleReport[] = []
  // Every rule's tests are handed to its engine as the rule is reached, without waiting for the
  // previous rule's: the Python worker pool runs them `poolSize` at a time (one sandbox per rule)
  // while the rest wait in its queue. Results are read back in file order.
  const pending: Array<{ report: RuleReport; outcomes: Promise<TestOutcome[]> }> = []
  const namesSeen = new Set<string>()
  const selecting =
    o.filters.length > 0 || o.kind !== undefined || o.skipDisabled || o.testNames.length > 0 || o.ignore.length > 0
  for (const a of files) {
    const f = index.files.get(a.path)!
    if (f.kind === undefined) continue
    if (o.kind && f.kind !== o.kind) continue
    if (!matchesFilters(dataOf(f), o.filters)) continue
    const rule = f.rule
    if (o.skipDisabled && rule?.file.data.Enabled === false) continue
    const report: RuleReport = {
      id: f.id ?? null,
      kind: f.kind,
      path: f.path,
      valid: a.status === 'valid',
      errors: a.problems,
      tests: [],
    }
    if (rule && report.valid && o.cmd === 'validate' && a.python) {
      // Loading compiled and imported its module (service/python-check.ts) and it cannot run here:
      // a module the interpreter lacks, or no sandbox to check it in. Never a pass.
      report.valid = false
      report.errors = [a.python.problem]
      summary.failedChecks++
    } else if (rule && report.valid && o.cmd === 'validate' && !f.python && engines[rule.kind]?.checkAsync) {
      // Loading checked every Python module it could (f.python set); this is for what it could not.
      // Checks that run code (a Python module must import and define rule()); the server runs them on API writes.
      try {
        const problems = await engines[rule.kind]!.checkAsync!(rule.file, ctx)
        if (problems.length > 0) {
          report.valid = false
          report.errors = problems.map((p) => ({ ...pub(p), message: `${rule.pythonPath ?? rule.path}: ${p.message}` }))
        }
      } catch (err) {
        report.valid = false
        report.errors = [
          { message: `cannot check the Python module: ${(err as Error).message}`, line: null, column: null },
        ]
      }
      if (!report.valid) summary.failedChecks++
    }
    if (!rule || !report.valid) {
      if (o.testNames.length === 0) {
        summary.rules++
        rules.push(report)
      }
      continue
    }
    const warnings = [...rule.warnings]
    const described = engines[rule.kind]?.describe?.(rule.file, ctx)
    if (described) warnings.push(...described.warnings)
    if (o.destinationIds) warnings.push(...unknownOutputIdWarnings(strings(rule.view.outputIDs), o.destinationIds))
    if (warnings.length > 0) report.warnings = warnings.map(pub)
    const allTests = Array.isArray(rule.file.data.Tests) ? (rule.file.data.Tests as unknown[]) : []
    if (o.cmd === 'test') {
      // Kinds whose format has no tests (queries) need none, as panther_analysis_tool asks them of rules.
      const testable = fieldsOf(rule.kind).some((f) => f.file === 'Tests')
      const coverage = o.minimumTests > 0 && testable ? coverageProblem(allTests, o.minimumTests) : null
      if (coverage) {
        report.coverage = coverage
        summary.insufficientTests++
      }
      let file = rule.file
      if (o.testNames.length > 0) {
        const picked = allTests.filter((t) => o.testNames.includes(testName(t)))
        if (picked.length === 0) continue
        for (const t of picked) namesSeen.add(testName(t))
        file = { ...file, data: { ...file.data, Tests: picked } }
      }
      pending.push({ report, outcomes: runTests(file, ctx, engines) })
    }
    summary.rules++
    rules.push(report)
  }
  for (const { report, outcomes } of pending) {
    for (const out of await outcomes) {
      summary.tests++
      if (out.passed === true) summary.passed++
      else if (out.passed === false) summary.failed++
      else summary.notRun++
      report.tests.push({
        name: out.name,
        expected: out.expected,
        actual: out.actual,
        passed: out.passed,
        error: out.error,
        ...(out.warnings?.length ? { warnings: out.warnings } : {}),
      })
    }
  }
  const report: RunReport = { summary, files, rules }
  const missingNames = o.testNames.filter((n) => !namesSeen.has(n))
  if (counts.analysisFiles === 0)
    report.error = `nothing to check: no analysis file under ${o.dir}${o.ignore.length ? ' (after --ignore-files)' : ''}`
  else if (missingNames.length > 0)
    report.error = `no selected rule has a test named ${missingNames.map((n) => JSON.stringify(n)).join(', ')}`
  else if (selecting && rules.length === 0) report.error = 'the filters select no rule'
  const failed =
    summary.invalid +
    summary.failedChecks +
    summary.insufficientTests +
    summary.failed +
    summary.notRun +
    (report.error ? 1 : 0)
  return { code: failed > 0 ? 1 : 0, report }
}

const testName = (t: unknown) =>
  String(t !== null && typeof t === 'object' ? (t as Record<string, unknown>).Name : undefined)

function command(cmd: 'test' | 'validate') {
  return async (argv: string[], env: Record<string, string | undefined>): Promise<number> => {
    if (argv.includes('--help') || argv.includes('-h')) {
      process.stdout.write(HELP(cmd))
      return 0
    }
    const { code, report, options } = await runDirectory(cmd, argv, env)
    if (options.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
    else printReport(cmd, report, { failuresOnly: options.failuresOnly })
    if (report.error) process.stderr.write(`rulekeeper ${cmd}: ${report.error}\n`)
    return code
  }
}

export const testCommand = command('test')
export const validateCommand = command('validate')
