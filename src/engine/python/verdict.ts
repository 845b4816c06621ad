// The verdict of detections.md §3.2 from what the worker reported about one test: rule() first,
// every other defined function after it, each output and error kept. Expected true passes iff rule()
// returned True and nothing raised or returned the wrong type; expected false iff rule() returned
// exactly False. A policy is the mirror image (its alert is False, as in Panther's tool): expected
// false passes iff policy() returned False and nothing raised; expected true iff it returned True. A stopped run (timeout, crash, output cap) fails the test with the reason; a module
// the interpreter lacks makes the test not run (passed: null), distinct from a failing rule.
import type { FunctionOutcome, TestOutcome } from '../engine.js'
import type { RunEvent, TestRecord } from './protocol.js'

/** Captured output and the tracebacks of functions that raised (`rulekeeper debug`; not part of the §4 JSON contract). */
export interface PythonTestOutcome extends TestOutcome {
  output?: { stdout: string; stderr: string }
  tracebacks?: Record<string, string>
  /** The log type the event was given and the DataModelID it used (null: none), when it got that far. */
  dataModel?: { logType: string | null; id: string | null }
}

const OUTPUT_IN_ERROR = 2000

function lastLines(text: string): string {
  const t = text.trim()
  return t.length > OUTPUT_IN_ERROR ? `…${t.slice(-OUTPUT_IN_ERROR)}` : t
}

/**
 * `alertValue`: what the entry function returns when it alerts (rule(): true, a policy's policy():
 * false); a test expecting it fails on any function's error, the other only on the entry's outcome.
 */
export function testOutcome(
  name: string,
  expected: boolean,
  record: TestRecord | undefined,
  alertValue = true,
): PythonTestOutcome {
  if (!record) {
    return {
      name,
      expected,
      actual: null,
      passed: false,
      error: 'the Python worker reported nothing for this test',
      errored: true,
      functions: {},
    }
  }
  const functions: Record<string, FunctionOutcome> = {}
  let running: string | undefined
  let importError: string | undefined
  // A Mocks entry naming nothing, a Log that is not an object, or the data model failing to load:
  // the test fails before rule().
  let setupError: string | undefined
  let missingModule: string | undefined
  let end: Extract<RunEvent, { t: 'end' }> | undefined
  const tracebacks: Record<string, string> = {}
  for (const event of record.events) {
    if (event.t === 'start') running = event.fn
    else if (event.t === 'fn') {
      functions[event.fn] = { output: event.output, error: event.error }
      if (event.traceback !== undefined) tracebacks[event.fn] = event.traceback
      running = undefined
    } else if (event.t === 'import_error') importError = `the rule module failed to import: ${event.message}`
    else if (event.t === 'mock_error' || event.t === 'log_error') setupError = event.message
    else if (event.t === 'data_model_error') setupError = event.message
    else if (event.t === 'missing_module') missingModule ??= event.module
    else if (event.t === 'end') end = event
  }
  let stopped: string | undefined
  if (record.status !== 'ok') {
    stopped = record.message ?? `the run stopped (${record.status})`
    if (running) functions[running] = { output: null, error: stopped }
    else if (!importError && !setupError && Object.keys(functions).length === 0)
      stopped = `while loading the rule module: ${stopped}`
  }
  const stdout = (end?.stdout ?? '') + record.stdout
  const stderr = (end?.stderr ?? '') + record.stderr
  if (missingModule !== undefined && record.status === 'ok') {
    // The rule could not run here at all: neither a pass nor the rule's failure (detections.md §4).
    const outcome: PythonTestOutcome = {
      name,
      expected,
      actual: null,
      passed: null,
      error: `not run: module ${missingModule} is not installed`,
      errored: false,
      functions,
    }
    if (stdout || stderr) outcome.output = { stdout, stderr }
    return outcome
  }
  const outputError = end?.outputExceeded
    ? `the test printed more than the output limit (${end.outputChars} characters)`
    : record.status === 'output-limit'
      ? (record.message ?? 'the test printed more than the output limit')
      : undefined

  const detection = functions.detection
  const actual =
    detection && detection.error === null && typeof detection.output === 'boolean' ? detection.output : null
  const errors = Object.entries(functions).filter(([, f]) => f.error !== null)
  const errored = errors.length > 0 || !!importError || !!setupError || !!stopped || !!outputError
  let passed: boolean
  if (importError || setupError || outputError || (stopped && !running)) passed = false
  else if (expected === alertValue) passed = actual === alertValue && errors.length === 0 && !stopped
  else passed = actual === expected

  let error: string | null = null
  if (!passed) {
    const first = errors.find(([fn]) => fn === 'detection') ?? errors[0]
    error =
      importError ??
      setupError ??
      (stopped && !running ? stopped : undefined) ??
      outputError ??
      (first ? `${first[0]}: ${first[1].error}` : null)
    if (error && stderr.trim()) error += `\nstderr: ${lastLines(stderr)}`
  }
  const outcome: PythonTestOutcome = { name, expected, actual, passed, error, errored, functions }
  if (end && end.logType !== undefined && end.dataModel !== undefined)
    outcome.dataModel = { logType: end.logType, id: end.dataModel }
  if (stdout || stderr) outcome.output = { stdout, stderr }
  if (Object.keys(tracebacks).length > 0) outcome.tracebacks = tracebacks
  return outcome
}

/** The import problems of a `check` job, as messages with the Python line when it is the rule's. */
export function importProblem(
  record: TestRecord | undefined,
  ruleFilename: string,
  /** The entry function the module must define (a policy's `policy(resource)`). */
  entry = 'rule(event)',
): { message: string; line?: number; code: string } | undefined {
  if (!record) return { message: 'the Python worker reported nothing about the module', code: 'PythonImportError' }
  if (record.status !== 'ok') {
    return {
      message: `importing the rule module failed: ${record.message ?? record.status}`,
      code: 'PythonImportError',
    }
  }
  for (const event of record.events) {
    // Still an import problem for validity (§3.2): the server cannot tell a third-party module the
    // interpreter lacks from a global helper the repository lacks. Its tests report "not run" (§4).
    if (event.t === 'missing_module') {
      const line = event.file === ruleFilename && typeof event.line === 'number' ? event.line : undefined
      return {
        message:
          `the rule module failed to import: No module named '${event.module}' (module ${event.module} is not ` +
          'installed in the configured interpreter, and no global helper of this repository has that GlobalID)',
        code: 'PythonImportError',
        ...(line ? { line } : {}),
      }
    }
    if (event.t === 'import_error') {
      const line = event.file === ruleFilename && typeof event.line === 'number' ? event.line : undefined
      return {
        message: `the rule module failed to import: ${event.message}`,
        code: 'PythonImportError',
        ...(line ? { line } : {}),
      }
    }
    if (event.t === 'module' && !event.functions.includes('detection')) {
      return { message: `${ruleFilename} defines no ${entry} function`, code: 'PythonMissingRule' }
    }
  }
  return undefined
}
