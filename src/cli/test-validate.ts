// `rulekeeper test [DIR]` and `rulekeeper validate [DIR]` (detections.md §4): load a repository
// directory, check every rule (validate) and run every test (test). Exit 0 when all pass, 1 when a
// test fails, did not run, or a file is invalid, 2 on a usage error. `--json` prints one document.
import path from 'node:path'
import fs from 'node:fs'
import type { EngineRegistry, TestOutcome } from '../engine/engine.js'
import { closeEngines, createEngineRegistry, DEFAULT_PYTHON } from '../engine/registry.js'
import { isRuleKind, kindDef, RULE_KINDS } from '../rules/kinds/index.js'
import type { RuleKind, RuleProblem } from '../rules/model.js'
import { loadDirectory } from '../service/directory-loader.js'
import { indexContext } from '../service/rule-views.js'
import { RulekeeperError } from '../errors.js'
import { parseArgs, UsageError } from './args.js'

const HELP = (
  cmd: string,
) => `Usage: rulekeeper ${cmd} [DIR] [--json] [--filter id=ID] [--kind ${RULE_KINDS.join('|')}]${cmd === 'test' ? ' [--skip-disabled]' : ''}

${cmd === 'test' ? 'Runs the unit tests of every rule under DIR (default .), disabled rules too.' : 'Loads and checks every rule file under DIR (default .) without running tests.'}
Exit code: 0 all good, 1 a test failed or did not run or a file is invalid, 2 usage error.
`

interface RuleReport {
  id: string | null
  kind: RuleKind | null
  path: string
  valid: boolean
  errors: Array<{ message: string; line: number | null; column: number | null }>
  warnings?: Array<{ message: string; line: number | null; column: number | null }>
  tests: Array<{
    name: string
    expected: boolean
    actual: boolean | null
    passed: boolean | null
    error: string | null
    warnings?: string[]
  }>
}

const pub = (p: RuleProblem) => ({ message: p.message, line: p.line ?? null, column: p.column ?? null })

export async function runDirectory(
  cmd: 'test' | 'validate',
  argv: string[],
  env: Record<string, string | undefined>,
): Promise<{ code: number; report: { summary: Record<string, number>; rules: RuleReport[] } }> {
  const engines = createEngineRegistry({
    python: { ...DEFAULT_PYTHON, command: env.RULEKEEPER_PYTHON || DEFAULT_PYTHON.command, serverEnv: env },
  })
  try {
    return await runWithEngines(cmd, argv, engines)
  } finally {
    await closeEngines(engines)
  }
}

async function runWithEngines(
  cmd: 'test' | 'validate',
  argv: string[],
  engines: EngineRegistry,
): Promise<{ code: number; report: { summary: Record<string, number>; rules: RuleReport[] } }> {
  const args = parseArgs(argv, ['filter', 'kind'], ['json', 'skip-disabled'])
  if (args.positionals.length > 1) throw new UsageError('at most one DIR')
  const dir = path.resolve(args.positionals[0] ?? '.')
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new UsageError(`${dir} is not a directory`)
  const kindOpt = args.options.kind
  if (kindOpt !== undefined && !isRuleKind(kindOpt))
    throw new UsageError(`--kind must be ${RULE_KINDS.slice(0, -1).join(', ')} or ${RULE_KINDS[RULE_KINDS.length - 1]}`)
  const filter = args.options.filter
  let filterId: string | undefined
  if (filter !== undefined) {
    const m = typeof filter === 'string' ? /^id=(.+)$/.exec(filter) : null
    if (!m) throw new UsageError('--filter takes id=RULE_ID')
    filterId = m[1]
  }
  const index = await loadDirectory(dir, engines)
  const ctx = indexContext(index)
  const rules: RuleReport[] = []
  const summary = { rules: 0, invalid: 0, tests: 0, passed: 0, failed: 0, notRun: 0 }
  const files = [...index.files.values()].filter((f) => f.kind !== undefined).sort((a, b) => (a.path < b.path ? -1 : 1))
  for (const f of files) {
    if (kindOpt && f.kind !== kindOpt) continue
    if (filterId && f.id !== filterId) continue
    const rule = f.rule
    if (cmd === 'test' && args.options['skip-disabled'] && rule && rule.file.data.Enabled === false) continue
    summary.rules++
    const report: RuleReport = {
      id: f.id ?? null,
      kind: f.kind ?? null,
      path: f.path,
      valid: f.errors.length === 0,
      errors: f.errors.map(pub),
      tests: [],
    }
    if (rule && f.errors.length === 0 && engines[rule.kind]?.checkAsync) {
      // Checks that run code (a Python module must import and define rule()).
      try {
        const problems = await engines[rule.kind]!.checkAsync!(rule.file, ctx)
        if (problems.length > 0) {
          report.valid = false
          report.errors = problems.map((p) => ({ ...pub(p), message: `${rule.pythonPath ?? rule.path}: ${p.message}` }))
        }
      } catch (err) {
        // `test` reports the tests as not run (below); `validate` cannot vouch for the file.
        if (cmd === 'validate') {
          report.valid = false
          report.errors = [
            { message: `cannot check the Python module: ${(err as Error).message}`, line: null, column: null },
          ]
        }
      }
    }
    if (!rule || !report.valid) {
      summary.invalid++
      rules.push(report)
      continue
    }
    const warnings = [...rule.warnings]
    const described = engines[rule.kind]?.describe?.(rule.file, ctx)
    if (described) warnings.push(...described.warnings)
    if (warnings.length > 0) report.warnings = warnings.map(pub)
    if (cmd === 'test') {
      const tests = Array.isArray(rule.file.data.Tests) ? (rule.file.data.Tests as Array<Record<string, unknown>>) : []
      let outcomes: TestOutcome[]
      const engine = engines[rule.kind]
      if (!engine)
        outcomes = tests.map((t) => ({
          name: String(t.Name),
          expected: t.ExpectedResult === true,
          actual: null,
          passed: null,
          error: kindDef(rule.kind).missingEngine,
        }))
      else {
        try {
          outcomes = await engine.runTests(rule.file, ctx)
        } catch (err) {
          const reason = err instanceof RulekeeperError ? err.message : `the test run failed: ${(err as Error).message}`
          outcomes = tests.map((t) => ({
            name: String(t.Name),
            expected: t.ExpectedResult === true,
            actual: null,
            passed: null,
            error: reason,
          }))
        }
      }
      for (const o of outcomes) {
        summary.tests++
        if (o.passed === true) summary.passed++
        else if (o.passed === false) summary.failed++
        else summary.notRun++
        report.tests.push({
          name: o.name,
          expected: o.expected,
          actual: o.actual,
          passed: o.passed,
          error: o.error,
          ...(o.warnings?.length ? { warnings: o.warnings } : {}),
        })
      }
    }
    rules.push(report)
  }
  const code = summary.invalid > 0 || summary.failed > 0 || summary.notRun > 0 ? 1 : 0
  return { code, report: { summary, rules } }
}

function printHuman(cmd: string, report: { summary: Record<string, number>; rules: RuleReport[] }): void {
  const color = process.stdout.isTTY && !process.env.NO_COLOR
  const paint = (c: number, s: string) => (color ? `\u001b[${c}m${s}\u001b[0m` : s)
  for (const r of report.rules) {
    if (!r.valid) {
      process.stdout.write(`${paint(31, '[INVALID]')} ${r.path}${r.id ? ` (${r.id})` : ''}\n`)
      for (const e of r.errors)
        process.stdout.write(`    ${r.path}${e.line ? `:${e.line}:${e.column}` : ''} ${e.message}\n`)
      continue
    }
    for (const w of r.warnings ?? []) process.stdout.write(`${paint(33, '[WARN]')} ${r.id}: ${w.message}\n`)
    if (cmd === 'validate') process.stdout.write(`${paint(32, '[VALID]')} ${r.id} (${r.path})\n`)
    for (const t of r.tests) {
      const tag =
        t.passed === true ? paint(32, '[PASS]') : t.passed === false ? paint(31, '[FAIL]') : paint(33, '[NOT RUN]')
      process.stdout.write(
        `${tag} ${r.id}: ${t.name}${t.passed === true ? '' : ` — ${t.error ?? `expected ${t.expected}, got ${t.actual}`}`}\n`,
      )
    }
  }
  const s = report.summary
  process.stdout.write(
    `\n${s.rules} rules, ${s.invalid} invalid${cmd === 'test' ? `; ${s.tests} tests: ${s.passed} passed, ${s.failed} failed, ${s.notRun} not run` : ''}\n`,
  )
}

function command(cmd: 'test' | 'validate') {
  return async (argv: string[], env: Record<string, string | undefined>): Promise<number> => {
    if (argv.includes('--help') || argv.includes('-h')) {
      process.stdout.write(HELP(cmd))
      return 0
    }
    const { code, report } = await runDirectory(cmd, argv, env)
    if (argv.includes('--json')) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
    else printHuman(cmd, report)
    return code
  }
}

export const testCommand = command('test')
export const validateCommand = command('validate')
