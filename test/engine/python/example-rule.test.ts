// The shared example scheduled rule runs through the real engine and a real python3: its four tests
// pass (global helper imported by GlobalID, the mock patched into the module), every function's
// output is reported, and the same tests with flipped expectations all fail.
import t from 'tap'
import { createPythonEngine } from '../../../src/engine/python/index.js'
import { contextWith, exampleGlobal, exampleRule } from './fixtures.js'

const { engine, pool, checkPythonModule } = createPythonEngine({ command: 'python3', poolSize: 2, timeoutMs: 5000 })
t.teardown(() => pool.close())
const ctx = contextWith(exampleGlobal())

t.test('the example rule passes all its tests with its global helper and its mock', async (t) => {
  const outcomes = await engine.runTests(exampleRule(), ctx)
  t.same(
    outcomes.map((o) => [o.name, o.passed, o.actual, o.error]),
    [
      ['three grants', true, true, null],
      ['a single grant', true, false, null],
      ['grants of another role', true, false, null],
      ['threshold read from a mocked helper', true, true, null],
    ],
  )
  const first = outcomes[0]!
  t.equal(first.errored, false)
  t.same(first.functions, {
    detection: { output: true, error: null },
    title: { output: 'dana@example.com granted admin to 3 people within an hour', error: null },
    alertContext: { output: { actor: 'dana@example.com', grants: 3 }, error: null },
    severity: { output: 'MEDIUM', error: null }, // DEFAULT → the file's Severity
  })
})

t.test('without the mock the mocked test fails: the mock really replaced the helper', async (t) => {
  const rule = exampleRule()
  const tests = (rule.data.Tests as Array<Record<string, unknown>>).map(({ Mocks: _m, ...rest }) => rest)
  const outcomes = await engine.runTests({ ...rule, data: { ...rule.data, Tests: tests } }, ctx)
  t.equal(outcomes[3]!.passed, false)
  t.equal(outcomes[3]!.actual, false)
})

t.test('flipped expectations fail, each of them', async (t) => {
  const rule = exampleRule()
  const flipped = (rule.data.Tests as Array<Record<string, unknown>>).map((x) => ({
    ...x,
    ExpectedResult: !x.ExpectedResult,
  }))
  const outcomes = await engine.runTests({ ...rule, data: { ...rule.data, Tests: flipped } }, ctx)
  t.same(
    outcomes.map((o) => o.passed),
    [false, false, false, false],
  )
  t.same(
    outcomes.map((o) => o.actual),
    [true, false, false, true],
  )
})

t.test('without the global helper in the repository the rule is invalid, with the Python error and line', async (t) => {
  const problems = await checkPythonModule(exampleRule(), contextWith())
  t.equal(problems.length, 1)
  t.match(problems[0], {
    path: ['Filename'],
    code: 'PythonImportError',
    line: 1,
    message: /No module named 'editor_helpers'/,
  })
  // Its tests cannot run (the module is missing): not run, never a pass (detections.md §4).
  const outcomes = await engine.runTests(exampleRule(), contextWith())
  t.ok(outcomes.every((o) => o.passed === null && o.error === 'not run: module editor_helpers is not installed'))
})

t.test('the example module imports cleanly', async (t) => {
  t.same(await checkPythonModule(exampleRule(), ctx), [])
  t.same(engine.check(exampleRule(), ctx).errors, [])
})
