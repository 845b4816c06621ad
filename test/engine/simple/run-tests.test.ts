// The simple-rule test runner: the verdict of spec §1.6 (filters first, ExpectedResult false passes
// iff no match, true passes iff match and no alert field failed), per-function outputs, invalid
// rules, malformed test items, ignored Mocks, and a rule with 10 tests (its ≤ 5 ms budget is a benchmark).
import t from 'tap'
import { compileRule, runSimpleRuleTests, simpleEngine, type CompiledRule } from '../../../src/engine/simple/index.js'
import { NO_NEIGHBOURS, ruleFile } from './helpers.js'

const base = {
  RuleID: 'Test.Login',
  Severity: 'Medium',
  Description: 'd',
  Reference: 'https://example.com',
  Runbook: 'r',
  OutputIds: ['slack'],
  Detection: [{ KeyPath: 'login.success', Condition: 'Equals', Value: false }],
  InlineFilters: [{ KeyPath: 'env', Condition: 'Equals', Value: 'prod' }],
  AlertTitle: 'failed login for {user}',
  GroupBy: [{ Key: 'user' }],
  DynamicSeverities: [{ ChangeTo: 'HIGH', Conditions: [{ Key: 'user', Condition: 'Equals', Value: 'root' }] }],
  AlertContext: [{ KeyName: 'who', KeyValue: { Key: 'user' } }],
}

t.test('the verdict compares match / no match, with the inline filters first', async (t) => {
  const rows: Array<[string, boolean, Record<string, unknown>, boolean | null, boolean, RegExp | null]> = [
    ['match expected and found', true, { env: 'prod', user: 'dana', login: { success: false } }, true, true, null],
    [
      'match expected, filters missing field passes',
      true,
      { user: 'dana', login: { success: false } },
      true,
      true,
      null,
    ],
    [
      'match expected, detection false',
      true,
      { env: 'prod', login: { success: true } },
      false,
      false,
      /expected a match .* did not match$/,
    ],
    [
      'match expected, filters block it',
      true,
      { env: 'dev', login: { success: false } },
      false,
      false,
      /InlineFilters did not pass/,
    ],
    ['no match expected and none', false, { env: 'prod', login: { success: true } }, false, true, null],
    [
      'no match expected, filters block a true detection',
      false,
      { env: 'dev', login: { success: false } },
      false,
      true,
      null,
    ],
    [
      'no match expected but matched',
      false,
      { env: 'prod', login: { success: false } },
      true,
      false,
      /expected no match .* the rule matched/,
    ],
  ]
  const tests = rows.map(([Name, ExpectedResult, Log]) => ({ Name, ExpectedResult, Log }))
  const outcomes = await simpleEngine.runTests(ruleFile({ ...base, Tests: tests }), NO_NEIGHBOURS)
  t.equal(outcomes.length, rows.length)
  rows.forEach(([name, expected, , actual, passed, error], i) => {
    const o = outcomes[i]!
    t.equal(o.name, name)
    t.equal(o.expected, expected, `${name}: expected`)
    t.equal(o.actual, actual, `${name}: actual`)
    t.equal(o.passed, passed, `${name}: passed`)
    t.equal(o.errored, false, `${name}: errored`)
    if (error === null) t.equal(o.error, null, `${name}: no error`)
    else t.match(o.error, error, `${name}: error`)
  })
})

t.test('every function is computed and reported for each test', async (t) => {
  const [matched, notMatched] = await simpleEngine.runTests(
    ruleFile({
      ...base,
      Tests: [
        {
          Name: 'root',
          ExpectedResult: true,
          Log: { env: 'prod', user: 'root', login: { success: false } },
          Mocks: [{ objectName: 'x', returnValue: 'y' }],
        },
        { Name: 'other', ExpectedResult: false, Log: { env: 'prod', login: { success: true } } },
      ],
    }),
    NO_NEIGHBOURS,
  )
  t.same(matched!.functions, {
    detection: { output: true, error: null },
    title: { output: 'failed login for root', error: null },
    dedup: { output: '["root"]', error: null },
    alertContext: { output: { who: 'root' }, error: null },
    severity: { output: 'HIGH', error: null },
    description: { output: 'd', error: null },
    reference: { output: 'https://example.com', error: null },
    runbook: { output: 'r', error: null },
    destinations: { output: ['slack'], error: null },
  })
  t.equal(matched!.passed, true, 'Mocks are ignored')
  t.same(notMatched!.functions!.severity, { output: 'MEDIUM', error: null })
  t.same(notMatched!.functions!.alertContext, { output: { who: null }, error: null })
  t.same(notMatched!.functions!.detection, { output: false, error: null })
})

t.test('without AlertContext its output is null; the static fields default to null', async (t) => {
  const [o] = await simpleEngine.runTests(
    ruleFile({
      RuleID: 'R',
      Severity: 'LOW',
      Detection: [{ Condition: 'AlwaysTrue' }],
      Tests: [{ Name: 'x', ExpectedResult: true, Log: {} }],
    }),
    NO_NEIGHBOURS,
  )
  t.same(o!.functions!.alertContext, { output: null, error: null })
  t.same(o!.functions!.title, { output: 'R', error: null })
  t.same(o!.functions!.description, { output: null, error: null })
  t.same(o!.functions!.destinations, { output: null, error: null })
})

t.test('a failing alert field fails a true expectation only', async (t) => {
  const { rule } = compileRule({ RuleID: 'R', Severity: 'LOW', Detection: [{ Condition: 'AlwaysTrue' }] })
  const broken: CompiledRule = {
    ...rule!,
    title: () => {
      throw new TypeError('cannot render')
    },
  }
  const data = {
    Tests: [
      { Name: 'expects match', ExpectedResult: true, Log: {} },
      { Name: 'expects none', ExpectedResult: false, Log: {} },
    ],
  }
  const [yes, no] = runSimpleRuleTests(data, broken, [])
  t.equal(yes!.actual, true)
  t.equal(yes!.passed, false)
  t.equal(yes!.errored, true)
  t.match(yes!.error, /title failed: TypeError: cannot render/)
  t.same(yes!.functions!.title, { output: null, error: 'TypeError: cannot render' })
  t.equal(no!.passed, false, 'the rule matched, so a false expectation fails anyway')
  const neverMatches: CompiledRule = { ...broken, detection: () => false }
  const [, none] = runSimpleRuleTests(data, neverMatches, [])
  t.equal(none!.passed, true, 'ExpectedResult false ignores alert-field errors')
  t.equal(none!.errored, true)
})

t.test('a detection that throws errors the test with a null outcome', async (t) => {
  const { rule } = compileRule({ RuleID: 'R', Severity: 'LOW', Detection: [{ Condition: 'AlwaysTrue' }] })
  const throwing: CompiledRule = {
    ...rule!,
    detection: () => {
      throw new RangeError('boom')
    },
  }
  const [o] = runSimpleRuleTests({ Tests: [{ Name: 'x', ExpectedResult: false, Log: {} }] }, throwing, [])
  t.equal(o!.actual, null)
  t.equal(o!.passed, false)
  t.equal(o!.errored, true)
  t.match(o!.error, /detection failed: RangeError: boom/)
})

t.test('an invalid rule fails every test with its first problem', async (t) => {
  const outcomes = await simpleEngine.runTests(
    ruleFile({
      RuleID: 'R',
      Detection: [{ Key: 'a', Condition: 'Nope' }, { Key: 'b' }],
      Tests: [
        { Name: 'a', ExpectedResult: false, Log: {} },
        { Name: 'b', ExpectedResult: true, Log: {} },
      ],
    }),
    NO_NEIGHBOURS,
  )
  t.equal(outcomes.length, 2)
  for (const o of outcomes) {
    t.equal(o.passed, false)
    t.equal(o.actual, null)
    t.match(
      o.error,
      /^the rule is invalid: Detection\.0\.Condition: unknown condition 'Nope'.*\(and 1 more problems\)$/,
    )
  }
})

t.test('malformed test items fail with a reason instead of throwing', async (t) => {
  const outcomes = await simpleEngine.runTests(
    ruleFile({
      ...base,
      Tests: [
        { Name: 'no log', ExpectedResult: true },
        { Name: 'bad expectation', ExpectedResult: 'yes', Log: {} },
        null,
        { ExpectedResult: false, Log: 'a string log' },
      ],
    }),
    NO_NEIGHBOURS,
  )
  t.same(
    outcomes.map((o) => [o.name, o.passed]),
    [
      ['no log', false],
      ['bad expectation', false],
      ['test 3', false],
      ['test 4', true],
    ],
  )
  t.match(outcomes[0]!.error, /no Log/)
  t.match(outcomes[1]!.error, /ExpectedResult must be true or false/)
  t.same(await simpleEngine.runTests(ruleFile({ ...base }), NO_NEIGHBOURS), [], 'no Tests → no outcomes')
})

t.test('a rule with 10 tests runs them all, each compiled afresh', async (t) => {
  // The ≤ 5 ms budget itself is measured by bench/simple-eval.bench.ts, not by a timed unit test.
  const tests = Array.from({ length: 10 }, (_, i) => ({
    Name: `case ${i}`,
    ExpectedResult: i % 2 === 0,
    Log: { env: 'prod', user: `u${i}`, login: { success: i % 2 !== 0 } },
  }))
  for (let run = 0; run < 3; run++) {
    // A fresh object each run, so nothing is served from the compilation cache.
    const outcomes = await simpleEngine.runTests(ruleFile({ ...base, Tests: tests }), NO_NEIGHBOURS)
    t.equal(outcomes.length, 10)
    t.ok(
      outcomes.every((o) => o.passed),
      'all ten pass',
    )
  }
})
