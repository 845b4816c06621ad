// The example Python streaming rule that reads a data model through `event.udm`
// (Editor.Audit.FailedLoginBurst: the Standard.Editor.Audit data model's Path, `$.` JSONPath and
// Method mappings, InlineFilters, a test `LogType`) through the CLI and the API: its tests pass and
// each flipped ExpectedResult fails. Needs `event.udm` and the data-model loader of the runtime.
//
// Its third test has `login_type: null` (IsNotNull is false: the filter rejects the event); its
// fourth has no `login_type` at all, and a filter on a missing field passes (detections.md §1.4, as
// Panther documents it), so rule() runs and decides: that test pins the missing-field rule.
import t from 'tap'
import { runCli } from '../../helpers/cli.js'
import { startInProcess } from '../../helpers/in-process.js'
import {
  type CliRule,
  DATA_MODEL_FILES,
  EXAMPLES,
  exampleBody,
  pushExamples,
  testCount,
  treeWithFlips,
  UDM_RULE,
} from './streaming-examples-fixtures.js'

const N = testCount(UDM_RULE.file)

async function cliTests(dir: string, ids: string[]): Promise<{ code: number | null; rules: CliRule[] }> {
  const r = await runCli(['test', dir, '--json', '--filter', `RuleID=${ids.join(',')}`])
  return { code: r.code, rules: JSON.parse(r.stdout).rules as CliRule[] }
}

t.test('rulekeeper test, the example as written: every test passes, udm() answered by the data model', async (t) => {
  const { code, rules } = await cliTests(EXAMPLES, [UDM_RULE.id])
  const tests = rules[0]!.tests
  t.equal(N, 4)
  t.same(
    tests.map((x) => [x.name, x.passed, x.actual, x.error]),
    [
      ['failed login', true, true, null],
      ['successful login', true, false, null],
      ['filtered out before rule() (login type null)', true, false, null],
      ['inline filter passes when the field is missing (rule() decides)', true, true, null],
    ],
  )
  t.equal(code, 0)
})

t.test('rulekeeper test: every test passes, each flipped one fails alone', async (t) => {
  const dir = treeWithFlips(UDM_RULE.file)
  const flips = Array.from({ length: N }, (_, i) => `${UDM_RULE.id}.Flip${i}`)
  const { code, rules } = await cliTests(dir, [UDM_RULE.id, ...flips])
  t.equal(code, 1, 'the flipped copies fail')
  const byId = new Map(rules.map((r) => [r.id, r]))
  t.same(
    byId.get(UDM_RULE.id)!.tests.map((x) => [x.passed, x.actual, x.error]),
    [
      [true, true, null],
      [true, false, null],
      [true, false, null],
      [true, true, null],
    ],
  )
  flips.forEach((id, i) => {
    t.same(
      byId.get(id)!.tests.map((x) => x.passed),
      Array.from({ length: N }, (_, j) => j !== i),
      `${id}: test ${i} fails, the others pass`,
    )
  })
})

t.test('the API, with the data model in the repository', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  await pushExamples(s, DATA_MODEL_FILES)

  await t.test('the example as written: its tests pass, with the functions reading udm()', async (t) => {
    const res = await s.request('POST', '/rules?run-tests-only=true', exampleBody(UDM_RULE.file))
    t.equal(res.status, 204, res.text)
    // The functions' outputs, from a run whose first test is reported (its second test flipped).
    const body = exampleBody(UDM_RULE.file)
    const tests = structuredClone(body.tests) as Array<Record<string, unknown>>
    tests[1]!.expectedResult = true
    const flipped = await s.request('POST', '/rules?run-tests-only=true', { ...body, tests })
    t.equal(flipped.status, 400)
    t.same(flipped.body.testResults[0].functions, {
      detection: { output: true, error: null },
      title: { output: 'Failed editor logins for [kim@example.com]', error: null },
      dedup: { output: 'kim@example.com', error: null },
      alertContext: { output: { actor: 'kim@example.com', ip: '203.0.113.99' }, error: null },
    })
  })

  await t.test('saves with its tests run first; each flipped test is refused alone', async (t) => {
    const body = exampleBody(UDM_RULE.file)
    const tests = body.tests as Array<Record<string, unknown>>
    for (let i = 0; i < N; i++) {
      const flipped = structuredClone(tests)
      flipped[i]!.expectedResult = !flipped[i]!.expectedResult
      const bad = await s.request('POST', '/rules', { ...body, tests: flipped })
      t.equal(bad.status, 400, `test ${i} flipped`)
      t.same(
        (bad.body.testResults as Array<{ passed: boolean }>).map((x) => x.passed),
        Array.from({ length: N }, (_, j) => j !== i),
        `only test ${i} fails`,
      )
    }
    const saved = await s.request('POST', '/rules', body)
    t.equal(saved.status, 200, saved.text)
    t.same(saved.body.tests[0].logType, 'Editor.Audit', "the test's LogType is kept")
  })
})
