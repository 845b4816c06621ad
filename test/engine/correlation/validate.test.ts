// Validation of the Detection block: one table row per problem with its exact message and path,
// valid rules that pass untouched, warnings, and every problem of a file reported at once.
import t from 'tap'
import { compileDetection } from '../../../src/engine/correlation/index.js'
import { groupData, link, parseYaml, sequenceData, step } from './helpers.js'

type Data = Record<string, unknown>
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any

const SEQ = sequenceData([step('A'), step('B')], [link('A', 'B', 10)], { LookbackWindowMinutes: 60 })
const GRP = groupData([step('A'), step('B')], undefined, { LookbackWindowMinutes: 60 })

/** A deep copy of `base` changed by `change` (which gets the Detection block). */
function edit(base: Data, change: (block: Any, data: Any) => void): Data {
  const data = structuredClone(base) as Any
  change(data.Detection?.[0], data)
  return data
}

interface Row {
  name: string
  data: Data
  path: Array<string | number>
  message: string
}

const D = ['Detection', 0]
const rows: Row[] = [
  // The block
  {
    name: 'no Detection',
    data: edit(SEQ, (_, d) => delete d.Detection),
    path: ['Detection'],
    message: 'Detection is required: a list holding one Group or Sequence block',
  },
  {
    name: 'Detection not a list',
    data: edit(SEQ, (b, d) => (d.Detection = b)),
    path: ['Detection'],
    message: /^Detection must be a list holding exactly one Group or Sequence block, got \{/.source,
  },
  {
    name: 'two blocks',
    data: edit(SEQ, (b, d) => d.Detection.push(b)),
    path: ['Detection'],
    message: 'Detection must be a list holding exactly one Group or Sequence block, got 2 items',
  },
  {
    name: 'block not a map',
    data: edit(SEQ, (_, d) => (d.Detection = ['Sequence'])),
    path: D,
    message: 'a Detection block must be a map with Group or Sequence, got "Sequence"',
  },
  {
    name: 'neither Group nor Sequence',
    data: edit(SEQ, (b) => delete b.Sequence),
    path: D,
    message: 'a Detection block needs Group (unordered members) or Sequence (ordered steps)',
  },
  {
    name: 'both Group and Sequence',
    data: edit(SEQ, (b) => (b.Group = b.Sequence)),
    path: D,
    message: 'a Detection block has either Group or Sequence, not both',
  },
  {
    name: 'unknown block key',
    data: edit(SEQ, (b) => (b.Lookback = 5)),
    path: [...D, 'Lookback'],
    message:
      'unknown key "Lookback" in a Sequence block (allowed: Sequence, Transitions, LookbackWindowMinutes, Schedule, EventEvaluationOrder)',
  },
  {
    name: 'MatchCriteria on a Sequence',
    data: edit(SEQ, (b) => (b.MatchCriteria = {})),
    path: [...D, 'MatchCriteria'],
    message:
      'unknown key "MatchCriteria" in a Sequence block (allowed: Sequence, Transitions, LookbackWindowMinutes, Schedule, EventEvaluationOrder)',
  },
  {
    name: 'lookback zero',
    data: edit(SEQ, (b) => (b.LookbackWindowMinutes = 0)),
    path: [...D, 'LookbackWindowMinutes'],
    message: 'LookbackWindowMinutes in the Sequence block must be a positive integer, got 0',
  },
  {
    name: 'lookback fractional',
    data: edit(SEQ, (b) => (b.LookbackWindowMinutes = 1.5)),
    path: [...D, 'LookbackWindowMinutes'],
    message: 'LookbackWindowMinutes in the Sequence block must be a positive integer, got 1.5',
  },
  {
    name: 'lookback a string',
    data: edit(SEQ, (b) => (b.LookbackWindowMinutes = '60')),
    path: [...D, 'LookbackWindowMinutes'],
    message: 'LookbackWindowMinutes in the Sequence block must be a positive integer, got "60"',
  },
  {
    name: 'bad EventEvaluationOrder',
    data: edit(SEQ, (b) => (b.EventEvaluationOrder = 'Random')),
    path: [...D, 'EventEvaluationOrder'],
    message: 'EventEvaluationOrder must be Chronological or ReverseChronological, got "Random"',
  },
  // Schedule
  {
    name: 'no Schedule',
    data: edit(SEQ, (b) => delete b.Schedule),
    path: [...D, 'Schedule'],
    message: 'Schedule is required: {RateMinutes or CronExpression, TimeoutMinutes}',
  },
  {
    name: 'Schedule not a map',
    data: edit(SEQ, (b) => (b.Schedule = 60)),
    path: [...D, 'Schedule'],
    message: 'Schedule must be a map with RateMinutes or CronExpression, and TimeoutMinutes; got 60',
  },
  {
    name: 'Schedule without a rate or cron',
    data: edit(SEQ, (b) => (b.Schedule = { TimeoutMinutes: 5 })),
    path: [...D, 'Schedule'],
    message: 'Schedule needs RateMinutes or CronExpression',
  },
  {
    name: 'Schedule with both',
    data: edit(SEQ, (b) => (b.Schedule.CronExpression = '0 * * * *')),
    path: [...D, 'Schedule'],
    message: 'Schedule has both RateMinutes and CronExpression; give exactly one',
  },
  {
    name: 'Schedule without timeout',
    data: edit(SEQ, (b) => delete b.Schedule.TimeoutMinutes),
    path: [...D, 'Schedule', 'TimeoutMinutes'],
    message: 'TimeoutMinutes is required in Schedule',
  },
  {
    name: 'rate below timeout',
    data: edit(SEQ, (b) => (b.Schedule = { RateMinutes: 5, TimeoutMinutes: 10 })),
    path: [...D, 'Schedule', 'RateMinutes'],
    message: 'RateMinutes (5) must be at least TimeoutMinutes (10): a run must time out before the next one starts',
  },
  {
    name: 'negative rate',
    data: edit(SEQ, (b) => (b.Schedule.RateMinutes = -60)),
    path: [...D, 'Schedule', 'RateMinutes'],
    message: 'RateMinutes in Schedule must be a positive integer, got -60',
  },
  {
    name: 'zero timeout',
    data: edit(SEQ, (b) => (b.Schedule.TimeoutMinutes = 0)),
    path: [...D, 'Schedule', 'TimeoutMinutes'],
    message: 'TimeoutMinutes in Schedule must be a positive integer, got 0',
  },
  {
    name: 'bad cron',
    data: edit(SEQ, (b) => (b.Schedule = { CronExpression: '61 * * * *', TimeoutMinutes: 5 })),
    path: [...D, 'Schedule', 'CronExpression'],
    message:
      'CronExpression must be a five-field cron expression (minute hour day-of-month month day-of-week), got "61 * * * *"',
  },
  {
    name: 'six-field cron',
    data: edit(SEQ, (b) => (b.Schedule = { CronExpression: '0 0 * * * *', TimeoutMinutes: 5 })),
    path: [...D, 'Schedule', 'CronExpression'],
    message:
      'CronExpression must be a five-field cron expression (minute hour day-of-month month day-of-week), got "0 0 * * * *"',
  },
  {
    name: 'unknown Schedule key',
    data: edit(SEQ, (b) => (b.Schedule.Every = 5)),
    path: [...D, 'Schedule', 'Every'],
    message: 'unknown key "Every" in Schedule (allowed: RateMinutes, CronExpression, TimeoutMinutes)',
  },
  // Steps
  {
    name: 'steps not a list',
    data: edit(SEQ, (b) => (b.Sequence = { A: 1 })),
    path: [...D, 'Sequence'],
    message: 'Sequence must be a list of steps, got {"A":1}',
  },
  {
    name: 'one step',
    data: edit(SEQ, (b) => {
      b.Sequence.pop()
      delete b.Transitions
    }),
    path: [...D, 'Sequence'],
    message: 'a Sequence needs at least two steps, found 1',
  },
  {
    name: 'one member',
    data: edit(GRP, (b) => {
      b.Group.pop()
      b.MatchCriteria.user.pop()
    }),
    path: [...D, 'Group'],
    message: 'a Group needs at least two members, found 1',
  },
  {
    name: 'step not a map',
    data: edit(SEQ, (b) => (b.Sequence[1] = 'B')),
    path: [...D, 'Sequence', 1],
    message: 'a Sequence step must be a map with ID and RuleID, got "B"',
  },
  {
    name: 'unknown step key',
    data: edit(SEQ, (b) => (b.Sequence[0].Count = 2)),
    path: [...D, 'Sequence', 0, 'Count'],
    message: 'unknown key "Count" in a Sequence step (allowed: ID, RuleID, MinMatchCount, MaxMatchCount, Absence)',
  },
  {
    name: 'step without ID',
    data: edit(GRP, (b) => {
      delete b.Group[1].ID
      b.MatchCriteria.user.pop()
    }),
    path: [...D, 'Group', 1, 'ID'],
    message: 'ID is required in Group member 2',
  },
  {
    name: 'step without RuleID',
    data: edit(SEQ, (b) => delete b.Sequence[0].RuleID),
    path: [...D, 'Sequence', 0, 'RuleID'],
    message: 'RuleID is required in Sequence step 1',
  },
  {
    name: 'step ID a number',
    data: edit(GRP, (b) => {
      b.Group[1].ID = 7
      b.MatchCriteria.user.pop()
    }),
    path: [...D, 'Group', 1, 'ID'],
    message: 'ID in Group member 2 must be a non-empty string, got 7',
  },
  {
    name: 'RuleID with spaces around',
    data: edit(SEQ, (b) => (b.Sequence[0].RuleID = ' R.A')),
    path: [...D, 'Sequence', 0, 'RuleID'],
    message: 'RuleID in Sequence step 1 must not start or end with spaces, got " R.A"',
  },
  {
    name: 'MinMatchCount zero',
    data: edit(SEQ, (b) => (b.Sequence[0].MinMatchCount = 0)),
    path: [...D, 'Sequence', 0, 'MinMatchCount'],
    message: 'MinMatchCount in Sequence step 1 must be a positive integer, got 0',
  },
  {
    name: 'MaxMatchCount negative',
    data: edit(SEQ, (b) => (b.Sequence[1].MaxMatchCount = -1)),
    path: [...D, 'Sequence', 1, 'MaxMatchCount'],
    message: 'MaxMatchCount in Sequence step 2 must be a positive integer, got -1',
  },
  {
    name: 'MaxMatchCount below MinMatchCount',
    data: edit(SEQ, (b) => Object.assign(b.Sequence[0], { MinMatchCount: 5, MaxMatchCount: 3 })),
    path: [...D, 'Sequence', 0, 'MaxMatchCount'],
    message: 'MaxMatchCount (3) of step "A" is below its MinMatchCount (5), so it can never match',
  },
  {
    name: 'Absence not a boolean',
    data: edit(SEQ, (b) => (b.Sequence[1].Absence = 'yes')),
    path: [...D, 'Sequence', 1, 'Absence'],
    message: 'Absence in Sequence step 2 must be true or false, got "yes"',
  },
  {
    name: 'duplicate step IDs',
    data: edit(SEQ, (b) => {
      b.Sequence.push(step('A'))
    }),
    path: [...D, 'Sequence', 2, 'ID'],
    message: 'step ID "A" is used more than once (first by step 1); IDs must be unique',
  },
  {
    name: 'every member absent',
    data: edit(GRP, (b) => {
      for (const m of b.Group) m.Absence = true
    }),
    path: [...D, 'Group'],
    message: 'every member of the Group is an Absence member; at least one must be present for the rule to match',
  },
  // Group
  {
    name: 'MatchCriteria not a map',
    data: edit(GRP, (b) => (b.MatchCriteria = ['user'])),
    path: [...D, 'MatchCriteria'],
    message: 'MatchCriteria must be a map from a criterion name to a list of {GroupID, Match}, got ["user"]',
  },
  {
    name: 'empty criterion',
    data: edit(GRP, (b) => (b.MatchCriteria.user = [])),
    path: [...D, 'MatchCriteria', 'user'],
    message: 'MatchCriteria "user" must be a non-empty list of {GroupID, Match}, got []',
  },
  {
    name: 'criterion item not a map',
    data: edit(GRP, (b) => (b.MatchCriteria.user[0] = 'A')),
    path: [...D, 'MatchCriteria', 'user', 0],
    message: 'an item of MatchCriteria "user" must be a map with GroupID and Match, got "A"',
  },
  {
    name: 'GroupID naming no member',
    data: edit(GRP, (b) => (b.MatchCriteria.user[1].GroupID = 'C')),
    path: [...D, 'MatchCriteria', 'user', 1, 'GroupID'],
    message: 'GroupID "C" names no member of the Group (members: "A", "B")',
  },
  {
    name: 'criterion item without Match',
    data: edit(GRP, (b) => delete b.MatchCriteria.user[0].Match),
    path: [...D, 'MatchCriteria', 'user', 0, 'Match'],
    message: 'Match is required in MatchCriteria "user" item 1',
  },
  {
    name: 'unknown criterion item key',
    data: edit(GRP, (b) => (b.MatchCriteria.user[0].On = 'x')),
    path: [...D, 'MatchCriteria', 'user', 0, 'On'],
    message: 'unknown key "On" in a MatchCriteria item (allowed: GroupID, Match)',
  },
  {
    name: 'member twice in one criterion',
    data: edit(GRP, (b) => (b.MatchCriteria.user[1].GroupID = 'A')),
    path: [...D, 'MatchCriteria', 'user', 1, 'GroupID'],
    message: 'member "A" appears more than once in MatchCriteria "user"',
  },
  {
    name: 'group MinMatchCount above the members',
    data: edit(GRP, (b) => (b.MinMatchCount = 3)),
    path: [...D, 'MinMatchCount'],
    message:
      "the Group's MinMatchCount (3) exceeds its number of members that are not Absence members (2), so it can never match",
  },
  {
    name: 'group MinMatchCount zero',
    data: edit(GRP, (b) => (b.MinMatchCount = 0)),
    path: [...D, 'MinMatchCount'],
    message: 'MinMatchCount in the Group block must be a positive integer, got 0',
  },
  {
    name: 'block MinMatchCount on a Sequence',
    data: edit(SEQ, (b) => (b.MinMatchCount = 1)),
    path: [...D, 'MinMatchCount'],
    message:
      'unknown key "MinMatchCount" in a Sequence block (allowed: Sequence, Transitions, LookbackWindowMinutes, Schedule, EventEvaluationOrder)',
  },
  // Transitions
  {
    name: 'Transitions not a list',
    data: edit(SEQ, (b) => (b.Transitions = b.Transitions[0])),
    path: [...D, 'Transitions'],
    message: /^Transitions must be a list, got \{/.source,
  },
  {
    name: 'transition not a map',
    data: edit(SEQ, (b) => (b.Transitions[0] = 'A to B')),
    path: [...D, 'Transitions', 0],
    message: 'a transition must be a map with ID, From, To and Match, got "A to B"',
  },
  {
    name: 'transition without ID',
    data: edit(SEQ, (b) => delete b.Transitions[0].ID),
    path: [...D, 'Transitions', 0, 'ID'],
    message: 'ID is required in transition 1',
  },
  {
    name: 'unknown transition key',
    data: edit(SEQ, (b) => (b.Transitions[0].Within = 5)),
    path: [...D, 'Transitions', 0, 'Within'],
    message: 'unknown key "Within" in a transition (allowed: ID, From, To, WithinTimeFrameMinutes, Match)',
  },
  {
    name: 'From naming no step',
    data: edit(SEQ, (b) => (b.Transitions[0].From = 'Z')),
    path: [...D, 'Transitions', 0, 'From'],
    message: 'From "Z" names no step of the Sequence (steps: "A", "B")',
  },
  {
    name: 'To naming no step',
    data: edit(SEQ, (b) => (b.Transitions[0].To = 'Z')),
    path: [...D, 'Transitions', 0, 'To'],
    message: 'To "Z" names no step of the Sequence (steps: "A", "B")',
  },
  {
    name: 'To missing',
    data: edit(SEQ, (b) => delete b.Transitions[0].To),
    path: [...D, 'Transitions', 0, 'To'],
    message: 'To is required in transition 1',
  },
  // §5.2: a transition may go to an earlier step of the list (valid, below); the links must make one chain.
  {
    name: 'transition to itself',
    data: edit(SEQ, (b) => (b.Transitions[0].To = 'A')),
    path: [...D, 'Transitions', 0, 'To'],
    message: 'transition 1 goes from "A" to itself; a transition links two different steps',
  },
  {
    name: 'a step followed by two steps',
    data: edit(SEQ, (b) => {
      b.Sequence.push(step('C'))
      b.Transitions.push({ ...b.Transitions[0], ID: 'A to C', To: 'C' })
    }),
    path: [...D, 'Transitions', 1],
    message:
      'transition 2 goes from "A" to "C", but transition 1 already goes from "A" to "B"; a sequence is one chain, so a step is followed by one step only',
  },
  {
    name: 'a step preceded by two steps',
    data: edit(SEQ, (b) => {
      b.Sequence.push(step('C'))
      b.Transitions.push({ ...b.Transitions[0], ID: 'C to B', From: 'C' })
    }),
    path: [...D, 'Transitions', 1],
    message:
      'transition 2 goes from "C" to "B", but transition 1 already goes from "A" to "B"; a sequence is one chain, so a step is preceded by one step only',
  },
  {
    name: 'transitions in a cycle',
    data: edit(SEQ, (b) => b.Transitions.push({ ...b.Transitions[0], ID: 'B to A', From: 'B', To: 'A' })),
    path: [...D, 'Transitions'],
    message: 'the transitions form a cycle through "A", "B"; a sequence must have a first step',
  },
  {
    name: 'two transitions for one link',
    data: edit(SEQ, (b) => b.Transitions.push({ ...b.Transitions[0], ID: 'again' })),
    path: [...D, 'Transitions', 1],
    message: 'transition 2 links "A" to "B" again (transition 1 already does)',
  },
  {
    name: 'duplicate transition IDs',
    data: edit(SEQ, (b) => {
      b.Sequence.push(step('C'))
      b.Transitions.push({ ...b.Transitions[0], From: 'B', To: 'C' })
    }),
    path: [...D, 'Transitions', 1, 'ID'],
    message: 'transition ID "A FOLLOWED BY B" is used more than once (first by transition 1)',
  },
  {
    name: 'time frame zero',
    data: edit(SEQ, (b) => (b.Transitions[0].WithinTimeFrameMinutes = 0)),
    path: [...D, 'Transitions', 0, 'WithinTimeFrameMinutes'],
    message: 'WithinTimeFrameMinutes in transition 1 must be a positive integer, got 0',
  },
  {
    name: 'two Match items',
    data: edit(SEQ, (b) => b.Transitions[0].Match.push({ On: 'host' })),
    path: [...D, 'Transitions', 0, 'Match'],
    message:
      'Match in transition 1 must be a list with exactly one item, {On: field} or {From: field, To: field}; got 2 items',
  },
  {
    name: 'empty Match list',
    data: edit(SEQ, (b) => (b.Transitions[0].Match = [])),
    path: [...D, 'Transitions', 0, 'Match'],
    message:
      'Match in transition 1 must be a list with exactly one item, {On: field} or {From: field, To: field}; got 0 items',
  },
  {
    name: 'Match a map, not a list',
    data: edit(SEQ, (b) => (b.Transitions[0].Match = { On: 'user' })),
    path: [...D, 'Transitions', 0, 'Match'],
    message:
      'Match in transition 1 must be a list with exactly one item, {On: field} or {From: field, To: field}; got {"On":"user"}',
  },
  {
    name: 'Match item with On and From',
    data: edit(SEQ, (b) => (b.Transitions[0].Match[0].From = 'x')),
    path: [...D, 'Transitions', 0, 'Match', 0],
    message:
      'the Match item of transition 1 has both On and From/To; use On for the same field on both sides, or From and To',
  },
  {
    name: 'Match item with From only',
    data: edit(SEQ, (b) => (b.Transitions[0].Match = [{ From: 'x' }])),
    path: [...D, 'Transitions', 0, 'Match', 0, 'To'],
    message: 'To is required in the Match item of transition 1',
  },
  {
    name: 'empty Match item',
    data: edit(SEQ, (b) => (b.Transitions[0].Match = [{}])),
    path: [...D, 'Transitions', 0, 'Match', 0],
    message: 'the Match item of transition 1 needs On, or both From and To',
  },
  {
    name: 'On not a string',
    data: edit(SEQ, (b) => (b.Transitions[0].Match = [{ On: true }])),
    path: [...D, 'Transitions', 0, 'Match', 0, 'On'],
    message: 'On in the Match item of transition 1 must be a non-empty string, got true',
  },
  {
    name: 'unknown Match item key',
    data: edit(SEQ, (b) => (b.Transitions[0].Match[0].Field = 'x')),
    path: [...D, 'Transitions', 0, 'Match', 0, 'Field'],
    message: 'unknown key "Field" in a transition Match item (allowed: On, From, To)',
  },
]

for (const row of rows) {
  t.test(`invalid: ${row.name}`, async (t) => {
    const result = compileDetection(row.data)
    t.equal(result.detection, null, 'nothing compiled')
    const problem = result.errors.find((e) => JSON.stringify(e.path) === JSON.stringify(row.path))
    t.ok(problem, `a problem at ${JSON.stringify(row.path)}; got ${JSON.stringify(result.errors)}`)
    if (row.message.startsWith('^')) t.match(problem?.message, new RegExp(row.message))
    else t.equal(problem?.message, row.message)
  })
}

t.test('every problem of a block is reported at once', async (t) => {
  const data = edit(SEQ, (b) => {
    b.LookbackWindowMinutes = -1
    b.Sequence.push(step('A'))
    b.Transitions[0].Match = []
    b.Schedule = { RateMinutes: 1, TimeoutMinutes: 5 }
  })
  const result = compileDetection(data)
  t.same(
    result.errors.map((e) => e.path),
    [
      [...D, 'LookbackWindowMinutes'],
      [...D, 'Schedule', 'RateMinutes'],
      [...D, 'Sequence', 2, 'ID'],
      [...D, 'Transitions', 0, 'Match'],
    ],
  )
})

t.test('valid rules compile with their defaults', async (t) => {
  const seq = compileDetection(
    sequenceData([step('A', { MinMatchCount: 2 }), step('B'), step('C', { Absence: true })], [link('A', 'B', 10)]),
  )
  t.same(seq.errors, [])
  t.same(seq.warnings, [
    {
      path: [...D, 'Transitions'],
      message: 'no transition links "B" to "C": that link joins nothing and its window is LookbackWindowMinutes (15)',
    },
  ])
  t.equal(seq.detection?.lookbackMinutes, 15)
  t.same(seq.detection?.gapMinutes, [10, 15], 'an unlinked pair gets the lookback window')
  t.same(
    seq.detection?.steps.map((s) => [s.id, s.minMatchCount, s.maxMatchCount, s.absent, [...s.joinFields]]),
    [
      ['A', 2, null, false, ['user']],
      ['B', 1, null, false, ['user']],
      ['C', 1, null, true, []],
    ],
  )
  const grp = compileDetection(groupData([step('A'), step('B'), step('C', { Absence: true })], ['A', 'B']))
  t.same(grp.errors, [])
  t.equal(grp.detection?.groupMinMatchCount, 2, 'default: every present member')
})

t.test('the spec’s Group and Sequence examples are valid', async (t) => {
  const group = parseYaml(`
Detection:
  - Group:
      - ID: Failures
        RuleID: Okta.Login.Failed
        MinMatchCount: 5
      - ID: Success
        RuleID: Okta.Login.Success
      - ID: Blocked
        RuleID: Okta.Account.Locked
        Absence: true
    MatchCriteria:
      user:
        - GroupID: Failures
          Match: p_alert_context.actor
        - GroupID: Success
          Match: p_alert_context.actor
        - GroupID: Blocked
          Match: p_alert_context.actor
    LookbackWindowMinutes: 60
    Schedule: { RateMinutes: 30, TimeoutMinutes: 5 }
`)
  const sequence = parseYaml(`
Detection:
  - Sequence:
      - ID: Created
        RuleID: IdP.User.Created
      - ID: Deleted
        RuleID: IdP.User.Deleted
    Transitions:
      - ID: Created FOLLOWED BY Deleted
        From: Created
        To: Deleted
        WithinTimeFrameMinutes: 60
        Match:
          - On: p_alert_context.user
    LookbackWindowMinutes: 120
    EventEvaluationOrder: ReverseChronological
    Schedule: { CronExpression: "0 * * * *", TimeoutMinutes: 5 }
`)
  t.same(compileDetection(group).errors, [])
  t.same(compileDetection(sequence).errors, [])
  t.equal(
    compileDetection(sequence).detection?.steps[0]?.joinFields.has('p_alert_context.user'),
    true,
    '`On` is a string key',
  )
})

t.test('warnings: a time frame longer than the lookback, counts on an absent step', async (t) => {
  const result = compileDetection(
    sequenceData([step('A'), step('B', { Absence: true, MinMatchCount: 2 })], [link('A', 'B', 90)], {
      LookbackWindowMinutes: 60,
    }),
  )
  t.same(result.errors, [])
  t.same(result.warnings, [
    {
      path: [...D, 'Sequence', 1, 'MinMatchCount'],
      message: 'MinMatchCount has no effect on step "B": it is an Absence step, which fails on any signal',
    },
    {
      path: [...D, 'Transitions', 0, 'WithinTimeFrameMinutes'],
      message:
        'WithinTimeFrameMinutes (90) of transition 1 exceeds LookbackWindowMinutes (60); signals older than the lookback window are never seen',
    },
  ])
})

t.test('§5.2: the transitions give the order, whatever the list order', async (t) => {
  // The list says A, B; the transition says B → A.
  const back = compileDetection(sequenceData([step('A'), step('B')], [link('B', 'A', 10)]))
  t.same(back.errors, [])
  t.same(back.warnings, [])
  t.same(
    back.detection?.steps.map((s) => [s.id, s.index, [...s.joinFields]]),
    [
      ['B', 0, ['user']],
      ['A', 1, ['user']],
    ],
  )
  t.same(back.detection?.gapMinutes, [10])
  // Three steps listed A, B, C and chained C → A → B.
  const rotated = compileDetection(
    sequenceData([step('A'), step('B'), step('C')], [link('A', 'B', 5), link('C', 'A', 7)]),
  )
  t.same(rotated.errors, [])
  t.same(
    rotated.detection?.steps.map((s) => s.id),
    ['C', 'A', 'B'],
  )
  t.same(rotated.detection?.gapMinutes, [7, 5])
  // A transition skipping a step of the list: the chain A → C, then B (chains follow the list
  // order of their first steps); the link C → B is implicit, and said so.
  const skip = compileDetection(sequenceData([step('A'), step('B'), step('C')], [link('A', 'C', 10)]))
  t.same(skip.errors, [])
  t.same(
    skip.detection?.steps.map((s) => s.id),
    ['A', 'C', 'B'],
  )
  t.same(skip.detection?.gapMinutes, [10, 15])
  t.same(skip.warnings, [
    {
      path: [...D, 'Transitions'],
      message: 'no transition links "C" to "B": that link joins nothing and its window is LookbackWindowMinutes (15)',
    },
  ])
})

t.test('§5.2: a transition without Match orders and times its steps but joins nothing', async (t) => {
  const noMatch = link('A', 'B', 10)
  delete noMatch.Match
  const result = compileDetection(sequenceData([step('A'), step('B')], [noMatch]))
  t.same(result.errors, [])
  t.same(result.warnings, [])
  t.same(
    result.detection?.steps.map((s) => [s.id, [...s.joinFields]]),
    [
      ['A', []],
      ['B', []],
    ],
  )
  t.same(result.detection?.gapMinutes, [10])
})
