// `rulekeeper debug RULE_ID TEST_NAME [DIR]` (detections.md §5.3): runs one test of one rule and shows
// everything the engine reports about it: the verdict, every function's output or error (with the
// traceback of rule code when the Python runner gives one), and what the rule printed.
import fs from 'node:fs'
import path from 'node:path'
import type { FunctionOutcome } from '../engine/engine.js'
import type { PythonTestOutcome } from '../engine/python/verdict.js'
import { closeEngines, createEngineRegistry, DEFAULT_PYTHON } from '../engine/registry.js'
import { loadDirectory } from '../service/directory-loader.js'
import { indexContext } from '../service/rule-views.js'
import { kindDef } from '../rules/kinds/index.js'
import { parseArgs, UsageError } from './args.js'
import { location } from './output.js'
import { runTests } from '../service/rule-tests.js'

const HELP = `Usage: rulekeeper debug RULE_ID TEST_NAME [DIR] [--json]

Runs the test TEST_NAME of the rule RULE_ID found under DIR (default .) and shows the verdict,
the output or error of every function of the rule (detection, title, dedup, alertContext,
severity, …), the data model the test's event used, the traceback of rule code that raised,
and what the rule printed.
Exit code: 0 the test passed, 1 it failed or did not run (or the rule or test is not found), 2 usage.
`

export async function debugCommand(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  const args = parseArgs(argv, [], ['json'])
  if (args.options.help) {
    process.stdout.write(HELP)
    return 0
  }
  const [ruleId, testName, dirArg, ...extra] = args.positionals
  if (!ruleId || testName === undefined || extra.length > 0) throw new UsageError('debug takes RULE_ID TEST_NAME [DIR]')
  const dir = path.resolve(dirArg ?? '.')
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new UsageError(`${dir} is not a directory`)
  const engines = createEngineRegistry({
    python: { ...DEFAULT_PYTHON, command: env.RULEKEEPER_PYTHON || DEFAULT_PYTHON.command, serverEnv: env },
  })
  try {
    const index = await loadDirectory(dir, engines)
    const holders = index.holders.get(ruleId) ?? []
    const rule = index.rules.get(ruleId)
    if (!rule || rule.stale) {
      const file = holders.map((p) => index.files.get(p)).find((f) => f && f.errors.length > 0)
      if (file) {
        process.stderr.write(`rulekeeper debug: ${file.path} (${ruleId}) is invalid:\n`)
        for (const e of file.errors)
          process.stderr.write(`    ${location(e.file ?? file.path, e.line, e.column)} ${e.message}\n`)
      } else process.stderr.write(`rulekeeper debug: no rule ${ruleId} under ${dir}\n`)
      return 1
    }
    const tests = Array.isArray(rule.file.data.Tests) ? (rule.file.data.Tests as Array<Record<string, unknown>>) : []
    const picked = tests.filter((t) => t.Name === testName)
    if (picked.length === 0) {
      const names = tests.map((t) => JSON.stringify(String(t.Name)))
      process.stderr.write(
        `rulekeeper debug: ${ruleId} has no test named ${JSON.stringify(testName)}; its tests: ${names.join(', ') || 'none'}\n`,
      )
      return 1
    }
    const file = { ...rule.file, data: { ...rule.file.data, Tests: picked.slice(0, 1) } }
    const [outcome] = await runTests(file, indexContext(index), engines)
    if (!outcome) throw new Error('the engine reported no outcome')
    if (args.options.json) {
      process.stdout.write(
        `${JSON.stringify({ id: ruleId, kind: rule.kind, path: rule.path, test: outcome }, null, 2)}\n`,
      )
      return outcome.passed === true ? 0 : 1
    }
    const out = (s: string) => process.stdout.write(`${s}\n`)
    const verdict = outcome.passed === true ? '[PASS]' : outcome.passed === false ? '[FAIL]' : '[NOT RUN]'
    out(`${ruleId}: ${testName} (${rule.path}, ${rule.kind} rule)`)
    out(`${verdict} expected ${outcome.expected}, got ${outcome.actual}`)
    if (outcome.error) out(`error: ${outcome.error}`)
    const functions = Object.entries(outcome.functions ?? {}) as Array<[string, FunctionOutcome]>
    if (functions.length > 0) {
      out('functions:')
      for (const [name, fn] of functions)
        out(`  ${name}: ${fn.error === null ? JSON.stringify(fn.output) : `error: ${fn.error}`}`)
    }
    const { output: printed, tracebacks, dataModel } = outcome as PythonTestOutcome
    if (dataModel)
      out(
        `data model: ${dataModel.id ?? 'none'} (log type ${dataModel.logType ?? 'none'}: the event's p_log_type, else the test's LogType, else the rule's first log type)`,
      )
    for (const [name, text] of Object.entries(tracebacks ?? {})) out(`traceback (${name}):\n${indent(text)}`)
    for (const w of outcome.warnings ?? []) out(`warning: ${w}`)
    if (printed?.stdout) out(`printed (stdout):\n${indent(printed.stdout)}`)
    if (printed?.stderr) out(`printed (stderr):\n${indent(printed.stderr)}`)
    if (!printed?.stdout && !printed?.stderr && kindDef(rule.kind).companion) out('printed: nothing')
    return outcome.passed === true ? 0 : 1
  } finally {
    await closeEngines(engines)
  }
}

const indent = (text: string) =>
  text
    .replace(/\n$/, '')
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n')
