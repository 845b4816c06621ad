// Running a correlation rule's unit tests (§2.1, §2.2): each test is one run over its signals;
// the rule matches if some join value completes the Group or Sequence. A test whose data is
// wrong (unknown step, bad or mixed timestamps) is an error, never a silent pass or fail.
import type { TestOutcome } from '../engine.js'
import { matchingJoinValues } from './evaluate-run.js'
import type { CompiledDetection } from './model.js'
import { describe } from './problems.js'
import { collectSignals, type RunSignals } from './signals.js'
import { isPlainObject } from '../../is-plain-object.js'

/** Whether one run matches: some join value completes the Group or Sequence. */
function evaluateRun(detection: CompiledDetection, signals: RunSignals): boolean {
  return matchingJoinValues(detection, signals, true).length > 0
}

/** Runs one test item `{Name, ExpectedResult, RuleOutputs}`. */
export function runCorrelationTest(detection: CompiledDetection, test: unknown, index: number): TestOutcome {
  if (!isPlainObject(test)) {
    return failed(
      `test ${index + 1}`,
      false,
      `a test must be a map with Name, ExpectedResult and RuleOutputs, got ${describe(test)}`,
    )
  }
  const name = typeof test.Name === 'string' ? test.Name : `test ${index + 1}`
  const expectedRaw = test.ExpectedResult
  const expected = expectedRaw === true
  if (typeof expectedRaw !== 'boolean') {
    return failed(name, expected, `ExpectedResult must be true or false, got ${describe(expectedRaw)}`)
  }
  const { signals, errors, warnings } = collectSignals(detection, test.RuleOutputs)
  if (signals === null) return failed(name, expected, errors.join('; '), warnings)
  const actual = evaluateRun(detection, signals)
  const outcome: TestOutcome = { name, expected, actual, passed: actual === expected, error: null }
  if (warnings.length > 0) outcome.warnings = warnings
  return outcome
}

/** A test that ran into bad data: it has no outcome and counts as failed (it did run). */
function failed(name: string, expected: boolean, error: string, warnings: string[] = []): TestOutcome {
  const outcome: TestOutcome = { name, expected, actual: null, passed: false, error }
  if (warnings.length > 0) outcome.warnings = warnings
  return outcome
}
