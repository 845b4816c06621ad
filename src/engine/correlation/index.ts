// The correlation-rule engine: checks a rule's `Detection` block and its references, and runs its
// unit tests with the evaluator of detections.md §2.2. Pure: it reads neighbours only through the
// EngineContext and never touches storage. docs/detections-correlation.md has the decisions.
import type { RuleFile } from '../../rules/model.js'
import type { CheckResult, EngineContext, RuleEngine, TestOutcome } from '../engine.js'
import { correlationReferenceIds, DANGLING_REFERENCE, resolveCorrelationLogTypes } from './references.js'
import { runCorrelationTest } from './run-tests.js'
import { compileDetection } from './validate.js'

export { correlationReferenceIds, resolveCorrelationLogTypes } from './references.js'
export { compileDetection } from './validate.js'
export type { CompiledDetection } from './model.js'

function checkCorrelationRule(rule: RuleFile, ctx: EngineContext): CheckResult {
  const compiled = compileDetection(rule.data)
  const errors = [...compiled.errors]
  const warnings = [...compiled.warnings]
  // A dangling reference is a warning here: the lead turns it into a 400 on API writes only.
  for (const problem of resolveCorrelationLogTypes(rule, ctx).problems) {
    if (problem.code === DANGLING_REFERENCE) warnings.push(problem)
    else errors.push(problem)
  }
  return { errors, warnings }
}

function runCorrelationTests(rule: RuleFile): TestOutcome[] {
  const tests = rule.data.Tests
  if (!Array.isArray(tests)) return []
  const { detection, errors } = compileDetection(rule.data)
  if (detection === null) {
    const first = errors[0]?.message ?? 'unknown problem'
    const reason = `the rule's Detection is invalid: ${first}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`
    return tests.map((test: unknown, i) => {
      const name =
        typeof (test as { Name?: unknown } | null)?.Name === 'string'
          ? (test as { Name: string }).Name
          : `test ${i + 1}`
      const expected = (test as { ExpectedResult?: unknown } | null)?.ExpectedResult === true
      return { name, expected, actual: null, passed: false, error: reason }
    })
  }
  return tests.map((test: unknown, i) => runCorrelationTest(detection, test, i))
}

/** Read-time fields: they depend on other rules, so they are derived from the current index. */
function describeCorrelationRule(rule: RuleFile, ctx: EngineContext) {
  const resolved = resolveCorrelationLogTypes(rule, ctx)
  return {
    fields: { correlationRuleReferenceIds: correlationReferenceIds(rule.data), logTypes: resolved.logTypes },
    warnings: resolved.problems,
  }
}

export const correlationEngine: RuleEngine = {
  kind: 'correlation',
  check: checkCorrelationRule,
  runTests: (rule) => Promise.resolve(runCorrelationTests(rule)),
  describe: describeCorrelationRule,
}
