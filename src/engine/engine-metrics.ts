// The engines with their unit-test runs counted (`rulekeeper_rule_tests_total{kind,outcome}`): a
// wrapper main.ts puts around the registry of engines (docs/operations.md).
import { Counter, type Registry } from '../metrics.js'
import type { EngineRegistry, RuleEngine, TestOutcome } from './engine.js'

type TestOutcomeLabel = 'pass' | 'fail' | 'error' | 'not_run'
const OUTCOMES: readonly TestOutcomeLabel[] = ['pass', 'fail', 'error', 'not_run']

/** pass; fail (ran, wrong verdict); error (the rule raised, timed out or crashed); not_run (could not run). */
function testOutcomeLabel(o: TestOutcome): TestOutcomeLabel {
  if (o.passed === true) return 'pass'
  if (o.passed === null) return 'not_run'
  return o.errored || o.actual === null ? 'error' : 'fail'
}

/**
 * The engines with their unit-test runs counted: `rulekeeper_rule_tests_total{kind,outcome}`. A
 * run the engine refuses altogether (503: the Python pool is busy or has no sandbox) counts each
 * of the rule's tests as not_run.
 */
export function instrumentEngines(engines: EngineRegistry, registry: Registry): EngineRegistry {
  const tests = new Counter({
    name: 'rulekeeper_rule_tests_total',
    help: 'Rule unit tests run by the API, by kind and outcome (pass, fail, error, not_run)',
    labelNames: ['kind', 'outcome'],
    registers: [registry],
  })
  const out: EngineRegistry = {}
  for (const [kind, engine] of Object.entries(engines) as Array<[keyof EngineRegistry, RuleEngine | undefined]>) {
    if (!engine) continue
    for (const outcome of OUTCOMES) tests.inc({ kind, outcome }, 0)
    const wrapped: RuleEngine = Object.create(engine)
    wrapped.runTests = async (rule, ctx) => {
      let outcomes: TestOutcome[]
      try {
        outcomes = await engine.runTests(rule, ctx)
      } catch (err) {
        const n = Array.isArray(rule.data.Tests) ? rule.data.Tests.length : 0
        if (n > 0) tests.inc({ kind, outcome: 'not_run' }, n)
        throw err
      }
      for (const o of outcomes) tests.inc({ kind, outcome: testOutcomeLabel(o) })
      return outcomes
    }
    out[kind] = wrapped
  }
  return out
}
