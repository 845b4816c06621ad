// Running a correlation rule's tests through the engine: the example rule's tests pass and fail
// when flipped; bad test data is a test error with a message (not a pass); signals dropped for
// a non-join field are warnings in the outcome.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { correlationEngine } from '../../../src/engine/correlation/index.js'
import { runCorrelationTest } from '../../../src/engine/correlation/run-tests.js'
import { compiled, contextOf, link, outcomeOf, parseYaml, ruleFile, sequenceData, step } from './helpers.js'

const EXAMPLE = new URL(
  '../../../examples/rules/correlation_rules/editor_brute_force_then_success.yml',
  import.meta.url,
)
const exampleData = () => parseYaml(readFileSync(EXAMPLE, 'utf8'))
const ctx = contextOf([])

t.test('the example rule’s tests all pass', async (t) => {
  const outcomes = await correlationEngine.runTests(ruleFile(exampleData()), ctx)
  t.equal(outcomes.length, 4)
  for (const o of outcomes) {
    t.equal(o.error, null, `${o.name}: no error`)
    t.equal(o.passed, true, `${o.name}: passes`)
    t.equal(o.actual, o.expected, `${o.name}: actual equals expected`)
  }
})

t.test('the example rule’s tests fail when ExpectedResult is flipped', async (t) => {
  const data = exampleData()
  const tests = data.Tests as Array<Record<string, unknown>>
  data.Tests = tests.map((test) => ({ ...test, ExpectedResult: !test.ExpectedResult }))
  const outcomes = await correlationEngine.runTests(ruleFile(data), ctx)
  t.same(
    outcomes.map((o) => [o.name, o.passed, o.actual]),
    [
      ['five failures then success', false, true],
      ['only four failures', false, false],
      ['success for a different account', false, false],
      ['success long after the failures', false, false],
    ],
  )
})

const AB = sequenceData([step('A'), step('B')], [link('A', 'B', 10)])

interface ErrorRow {
  name: string
  outputs: unknown
  message: string | RegExp
}

const errorRows: ErrorRow[] = [
  {
    name: 'a RuleOutputs ID that names no step',
    outputs: [{ ID: 'Sucess', Matches: { user: { u: [0] } } }],
    message: 'RuleOutputs[0]: ID "Sucess" names no step of this rule (steps: "A", "B")',
  },
  {
    name: 'a RuleOutputs item without ID',
    outputs: [{ Matches: { user: { u: [0] } } }],
    message: 'RuleOutputs[0]: ID must be the ID of a step ("A", "B"), got nothing',
  },
  {
    name: 'integer minutes mixed with RFC 3339 strings',
    outputs: [
      { ID: 'A', Matches: { user: { u: [0] } } },
      { ID: 'B', Matches: { user: { u: ['2026-11-20T08:00:00Z'] } } },
    ],
    message:
      'timestamps mix integer minutes (first in RuleOutputs[0].Matches["user"]["u"]) and RFC 3339 strings (first in RuleOutputs[1].Matches["user"]["u"]); use one kind per test',
  },
  {
    name: 'a timestamp that is not RFC 3339',
    outputs: [{ ID: 'A', Matches: { user: { u: ['2026-11-20 8:00'] } } }],
    message:
      'RuleOutputs[0].Matches["user"]["u"]: "2026-11-20 8:00" is neither an integer number of minutes nor an RFC 3339 timestamp',
  },
  {
    name: 'an impossible date',
    outputs: [{ ID: 'A', Matches: { user: { u: ['2026-02-30T08:00:00Z'] } } }],
    message: /"2026-02-30T08:00:00Z" is neither an integer number of minutes nor an RFC 3339 timestamp/,
  },
  {
    name: 'fractional minutes',
    outputs: [{ ID: 'A', Matches: { user: { u: [1.5] } } }],
    message: 'RuleOutputs[0].Matches["user"]["u"]: 1.5 is not an integer number of minutes',
  },
  {
    name: 'a value that is not a list of timestamps',
    outputs: [{ ID: 'A', Matches: { user: { u: 5 } } }],
    message: 'RuleOutputs[0].Matches["user"]["u"] must be a list of timestamps, got 5',
  },
  {
    name: 'Matches that is not a map',
    outputs: [{ ID: 'A', Matches: ['u'] }],
    message: 'RuleOutputs[0] (step "A"): Matches must be a map field → value → [time, …], got ["u"]',
  },
  {
    name: 'RuleOutputs that is not a list',
    outputs: { ID: 'A' },
    message: 'RuleOutputs must be a list of {ID, Matches}, got {"ID":"A"}',
  },
]

for (const row of errorRows) {
  t.test(`test error: ${row.name}`, async (t) => {
    const outcome = runCorrelationTest(
      compiled(AB),
      { Name: row.name, ExpectedResult: true, RuleOutputs: row.outputs },
      0,
    )
    t.equal(outcome.actual, null, 'no outcome')
    t.equal(outcome.passed, false, 'never a pass')
    if (typeof row.message === 'string') t.equal(outcome.error, row.message)
    else t.match(outcome.error, row.message)
  })
}

t.test('every problem of a test is reported, joined', async (t) => {
  const outcome = outcomeOf(AB, [
    { ID: 'X', Matches: { user: { u: [0] } } },
    { ID: 'A', Matches: { user: { u: [0.5] } } },
  ])
  t.match(outcome.error, /ID "X" names no step.*; .*0\.5 is not an integer/)
})

t.test('a flood of bad timestamps is summarised', async (t) => {
  const outcome = outcomeOf(AB, [{ ID: 'A', Matches: { user: { u: Array.from({ length: 50 }, () => 'x') } } }])
  t.match(outcome.error, /… and 40 more problems$/)
})

t.test('signals on a field the step does not join on are dropped with a warning', async (t) => {
  const outcome = outcomeOf(AB, [
    { ID: 'A', Matches: { user: { alice: [0] }, actor: { alice: [1, 2] } } },
    { ID: 'B', Matches: { usr: { alice: [5] } } },
  ])
  t.equal(outcome.actual, false, 'B has no signal left')
  t.equal(outcome.error, null)
  t.same(outcome.warnings, [
    'RuleOutputs[0] (step "A"): 2 signals of field "actor" ignored: step "A" joins only on "user"',
    'RuleOutputs[1] (step "B"): 1 signal of field "usr" ignored: step "B" joins only on "user"',
  ])
})

t.test('a dropped signal does not move the lookback window', async (t) => {
  const outcome = outcomeOf(AB, [
    { ID: 'A', Matches: { user: { alice: [0] } } },
    { ID: 'B', Matches: { user: { alice: [5] }, usr: { alice: [500] } } },
  ])
  t.equal(outcome.actual, true)
  t.equal(outcome.warnings?.length, 1)
})

t.test('a test with no RuleOutputs runs and does not match', async (t) => {
  const outcomes = await correlationEngine.runTests(
    ruleFile({ ...AB, Tests: [{ Name: 'empty', ExpectedResult: false, RuleOutputs: [] }] }),
    ctx,
  )
  t.same(outcomes, [{ name: 'empty', expected: false, actual: false, passed: true, error: null }])
})

t.test('an ExpectedResult that is not a boolean is a test error', async (t) => {
  const outcomes = await correlationEngine.runTests(
    ruleFile({ ...AB, Tests: [{ Name: 'bad', ExpectedResult: 'yes', RuleOutputs: [] }] }),
    ctx,
  )
  t.equal(outcomes[0]?.error, 'ExpectedResult must be true or false, got "yes"')
  t.equal(outcomes[0]?.passed, false)
})

t.test('tests of a rule whose Detection is invalid report why, and fail', async (t) => {
  const data = sequenceData([step('A')])
  data.Tests = [{ Name: 'one', ExpectedResult: true, RuleOutputs: [] }]
  const outcomes = await correlationEngine.runTests(ruleFile(data), ctx)
  t.same(outcomes, [
    {
      name: 'one',
      expected: true,
      actual: null,
      passed: false,
      error: "the rule's Detection is invalid: a Sequence needs at least two steps, found 1",
    },
  ])
})

t.test('a rule without tests has no outcomes', async (t) => {
  t.same(await correlationEngine.runTests(ruleFile(AB), ctx), [])
})

// Panther documents (panther-labs/panther-analysis, style_guides/CORRELATION_RULES_STYLE_GUIDE.md)
// that `WithinTimeFrameMinutes` is optional and defaults to `LookbackWindowMinutes`, and its
// published rules join a transition's two ends on different fields with a `From`/`To` Match item
// and end a sequence on an Absence step (e.g. a login NOT FOLLOWED BY a push approval). A rule of
// that shape, with its steps listed in the reverse of the transition's order (§5.2):
t.test('a Panther-shaped sequence: From/To Match, absent last step, default window, reversed list', async (t) => {
  const data = parseYaml(`
AnalysisType: correlation_rule
RuleID: Login.Without.Approval
Enabled: true
Severity: High
Detection:
  - Sequence:
      - ID: Approval
        RuleID: Push.Approved
        Absence: true
      - ID: Login
        RuleID: IdP.Login
    Transitions:
      - ID: Login NOT FOLLOWED BY Approval
        From: Login
        To: Approval
        Match:
          - From: actor.alternateId
            To: new.email
    Schedule:
      RateMinutes: 5
      TimeoutMinutes: 2
    LookbackWindowMinutes: 30
Tests:
  - Name: login then approval by the same person
    ExpectedResult: false
    RuleOutputs:
      - ID: Login
        Matches: { actor.alternateId: { frodo@example.com: [0] } }
      - ID: Approval
        Matches: { new.email: { frodo@example.com: [3] } }
  - Name: login, no approval
    ExpectedResult: true
    RuleOutputs:
      - ID: Login
        Matches: { actor.alternateId: { frodo@example.com: [0] } }
  - Name: login then approval by someone else
    ExpectedResult: true
    RuleOutputs:
      - ID: Login
        Matches: { actor.alternateId: { frodo@example.com: [0] } }
      - ID: Approval
        Matches: { new.email: { sam@example.com: [3] } }
  - Name: an approval 30 minutes after the login is inside the default window (the lookback, 30)
    ExpectedResult: false
    RuleOutputs:
      - ID: Login
        Matches: { actor.alternateId: { frodo@example.com: [0] } }
      - ID: Approval
        Matches: { new.email: { frodo@example.com: [30] } }
  - Name: an approval before the login does not clear it
    ExpectedResult: true
    RuleOutputs:
      - ID: Approval
        Matches: { new.email: { frodo@example.com: [0] } }
      - ID: Login
        Matches: { actor.alternateId: { frodo@example.com: [5] } }
`)
  const checked = correlationEngine.check(ruleFile(data), ctx)
  t.same(checked.errors, [])
  const outcomes = await correlationEngine.runTests(ruleFile(data), ctx)
  t.same(
    outcomes.map((o) => [o.name, o.error, o.passed]),
    (data.Tests as Array<{ Name: string }>).map((test) => [test.Name, null, true]),
  )
  t.same(
    compiled(data).steps.map((s) => s.id),
    ['Login', 'Approval'],
    'the transition orders Login before Approval',
  )
  t.same(compiled(data).gapMinutes, [30], 'no WithinTimeFrameMinutes: the window is the lookback')
})
