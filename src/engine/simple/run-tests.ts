// The unit-test runner of simple rules with the verdict of spec §1.6: the outcome is false when the
// inline filters do not pass, else the detection's value; `ExpectedResult: false` passes iff the
// outcome is false; `true` passes iff it is true and no alert field failed. Every alert field is
// computed for every test, as the Python runner does, so a person sees what an alert would carry.
import type { FunctionOutcome, TestOutcome } from '../engine.js'
import type { RuleProblem } from '../../rules/model.js'
import type { CompiledRule } from './rule.js'

const ALERT_FUNCTIONS = ['title', 'dedup', 'alertContext', 'severity'] as const

function attempt(fn: () => unknown): FunctionOutcome {
  try {
    return { output: fn(), error: null }
  } catch (err) {
    return { output: null, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) }
  }
}

const staticValue = (v: unknown): FunctionOutcome => ({ output: v === undefined ? null : v, error: null })

function describePath(p: RuleProblem): string {
  return p.path.length === 0 ? p.message : `${p.path.join('.')}: ${p.message}`
}

/**
 * Runs `data.Tests`. `rule` is null when the rule did not validate: every test then fails (it is
 * the rule that is broken, not the environment) with the first problem as its error.
 */
export function runSimpleRuleTests(
  data: Readonly<Record<string, unknown>>,
  rule: CompiledRule | null,
  errors: readonly RuleProblem[],
): TestOutcome[] {
  const tests = Array.isArray(data.Tests) ? data.Tests : []
  const statics: Record<string, FunctionOutcome> = {
    description: staticValue(data.Description),
    reference: staticValue(data.Reference),
    runbook: staticValue(data.Runbook),
    destinations: staticValue(data.OutputIds),
  }
  return tests.map((test: unknown, i): TestOutcome => {
    const t = (test !== null && typeof test === 'object' ? test : {}) as Record<string, unknown>
    const name = typeof t.Name === 'string' ? t.Name : `test ${i + 1}`
    const expected = t.ExpectedResult === true
    const failed = (error: string): TestOutcome => ({
      name,
      expected,
      actual: null,
      passed: false,
      error,
      errored: true,
      functions: {},
    })
    if (rule === null) {
      const first = errors[0]
      return failed(
        `the rule is invalid${first === undefined ? '' : `: ${describePath(first)}`}${errors.length > 1 ? ` (and ${errors.length - 1} more problems)` : ''}`,
      )
    }
    if (typeof t.ExpectedResult !== 'boolean') return failed('ExpectedResult must be true or false')
    if (!Object.hasOwn(t, 'Log')) return failed('the test has no Log')
    const log = t.Log
    let filtersPassed = false
    const detection = attempt(() => (filtersPassed = rule.filtersPass(log)) && rule.detection(log))
    const functions: Record<string, FunctionOutcome> = { detection }
    for (const f of ALERT_FUNCTIONS) functions[f] = attempt(() => rule[f](log))
    if (rule.tree.alertContext === undefined) functions.alertContext = { output: null, error: null }
    Object.assign(functions, statics)

    const actual = detection.error === null ? (detection.output as boolean) : null
    const alertErrors = ALERT_FUNCTIONS.filter((f) => functions[f]!.error !== null)
    const errored = detection.error !== null || alertErrors.length > 0
    let passed: boolean
    let error: string | null = null
    if (detection.error !== null) {
      passed = false
      error = `the detection failed: ${detection.error}`
    } else if (!expected) {
      passed = actual === false
      if (!passed) error = 'expected no match (ExpectedResult: false) but the rule matched'
    } else {
      passed = actual === true && alertErrors.length === 0
      if (actual !== true)
        error = `expected a match (ExpectedResult: true) but the rule did not match${filtersPassed ? '' : ' (InlineFilters did not pass)'}`
      else if (!passed) error = alertErrors.map((f) => `${f} failed: ${functions[f]!.error}`).join('; ')
    }
    return { name, expected, actual, passed, error, errored, functions }
  })
}
