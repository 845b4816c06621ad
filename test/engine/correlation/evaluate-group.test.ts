// Group evaluation, one table row per behaviour of detections.md §2.2 rule 5 and its edges:
// counts, MaxMatchCount, absent members before / after / outside the window, join values,
// unjoined members, the group-level MinMatchCount, and the lookback of exactly L.
import t from 'tap'
import { groupData, outcomeOf, step, type Signals } from './helpers.js'

const LOOKBACK = { LookbackWindowMinutes: 60 }
const AB = groupData([step('A'), step('B')], undefined, LOOKBACK)
const A3_B = groupData([step('A', { MinMatchCount: 3 }), step('B')], undefined, LOOKBACK)
const A_BMAX2 = groupData([step('A'), step('B', { MaxMatchCount: 2 })], undefined, LOOKBACK)
const AB_NOT_C = groupData([step('A'), step('B'), step('C', { Absence: true })], undefined, LOOKBACK)
const TWO_OF_THREE = groupData([step('A'), step('B'), step('C')], undefined, { ...LOOKBACK, MinMatchCount: 2 })
const A_JOINED_B_UNJOINED = groupData([step('A'), step('B')], ['A'], LOOKBACK)

interface Row {
  name: string
  rule: Record<string, unknown>
  signals: Signals
  expected: boolean
}

const rows: Row[] = [
  {
    name: 'every member with the same value matches',
    rule: AB,
    signals: { A: { alice: [0] }, B: { alice: [5] } },
    expected: true,
  },
  {
    name: 'order does not matter in a group',
    rule: AB,
    signals: { A: { alice: [5] }, B: { alice: [0] } },
    expected: true,
  },
  { name: 'equal timestamps match', rule: AB, signals: { A: { alice: [3] }, B: { alice: [3] } }, expected: true },
  { name: 'a member without signals does not match', rule: AB, signals: { A: { alice: [0, 1] } }, expected: false },
  {
    name: 'members with different values do not match',
    rule: AB,
    signals: { A: { alice: [0] }, B: { bob: [0] } },
    expected: false,
  },
  {
    name: 'of two join values only the one that completes matters',
    rule: AB,
    signals: { A: { alice: [0], bob: [1] }, B: { bob: [2], carol: [3] } },
    expected: true,
  },
  { name: 'no signals at all is no match', rule: AB, signals: {}, expected: false },
  {
    name: 'MinMatchCount met matches',
    rule: A3_B,
    signals: { A: { alice: [0, 1, 2] }, B: { alice: [0] } },
    expected: true,
  },
  {
    name: 'MinMatchCount not met does not match',
    rule: A3_B,
    signals: { A: { alice: [0, 1] }, B: { alice: [0] } },
    expected: false,
  },
  {
    name: 'MinMatchCount counts per join value',
    rule: A3_B,
    signals: { A: { alice: [0, 1], bob: [2] }, B: { alice: [0], bob: [0] } },
    expected: false,
  },
  {
    name: 'equal timestamps are separate signals',
    rule: A3_B,
    signals: { A: { alice: [4, 4, 4] }, B: { alice: [4] } },
    expected: true,
  },
  {
    name: 'MaxMatchCount reached matches',
    rule: A_BMAX2,
    signals: { A: { u: [0] }, B: { u: [1, 2] } },
    expected: true,
  },
  {
    name: 'more than MaxMatchCount fails',
    rule: A_BMAX2,
    signals: { A: { u: [0] }, B: { u: [1, 2, 3] } },
    expected: false,
  },
  {
    name: 'MaxMatchCount counts only kept signals (older ones are outside the window)',
    rule: A_BMAX2,
    signals: { A: { u: [100] }, B: { u: [10, 90, 95] } },
    expected: true,
  },
  {
    name: 'absent member: none present matches',
    rule: AB_NOT_C,
    signals: { A: { u: [0] }, B: { u: [5] } },
    expected: true,
  },
  {
    name: 'absent member: a signal after the others fails',
    rule: AB_NOT_C,
    signals: { A: { u: [0] }, B: { u: [5] }, C: { u: [9] } },
    expected: false,
  },
  {
    name: 'absent member: a signal before the others fails',
    rule: AB_NOT_C,
    signals: { A: { u: [5] }, B: { u: [9] }, C: { u: [0] } },
    expected: false,
  },
  {
    name: 'absent member: a signal of another value does not count',
    rule: AB_NOT_C,
    signals: { A: { u: [0] }, B: { u: [5] }, C: { v: [3] } },
    expected: true,
  },
  {
    name: 'absent member: a signal exactly L before the latest one fails (it is kept)',
    rule: AB_NOT_C,
    signals: { A: { u: [60] }, B: { u: [70] }, C: { u: [10] } },
    expected: false,
  },
  {
    name: 'absent member: a signal outside the window does not count',
    rule: AB_NOT_C,
    signals: { A: { u: [60] }, B: { u: [70] }, C: { u: [9] } },
    expected: true,
  },
  {
    name: 'lookback: a member exactly L before the latest signal is kept',
    rule: AB,
    signals: { A: { u: [0] }, B: { u: [60] } },
    expected: true,
  },
  {
    name: 'lookback: a member L + 1 before the latest signal is not',
    rule: AB,
    signals: { A: { u: [0] }, B: { u: [61] } },
    expected: false,
  },
  {
    name: 'lookback: a later signal of another value moves the window',
    rule: AB,
    signals: { A: { u: [0], v: [100] }, B: { u: [1] } },
    expected: false,
  },
  {
    name: 'group MinMatchCount: two of three members match',
    rule: TWO_OF_THREE,
    signals: { A: { u: [0] }, C: { u: [1] } },
    expected: true,
  },
  {
    name: 'group MinMatchCount: one of three does not',
    rule: TWO_OF_THREE,
    signals: { A: { u: [0] }, B: { v: [1] } },
    expected: false,
  },
  {
    name: 'an unjoined member matches whatever value',
    rule: A_JOINED_B_UNJOINED,
    signals: { A: { alice: [0] }, B: { anything: [1] } },
    expected: true,
  },
  {
    name: 'an unjoined member still has to be there',
    rule: A_JOINED_B_UNJOINED,
    signals: { A: { alice: [0] } },
    expected: false,
  },
]

for (const row of rows) {
  t.test(row.name, async (t) => {
    const outcome = outcomeOf(row.rule, row.signals)
    t.equal(outcome.error, null, 'the test runs')
    t.equal(outcome.actual, row.expected)
  })
}

t.test('an unjoined member takes signals of any field, without warnings', async (t) => {
  const outcome = outcomeOf(A_JOINED_B_UNJOINED, [
    { ID: 'A', Matches: { user: { alice: [0] } } },
    { ID: 'B', Matches: { host: { web1: [1] } } },
  ])
  t.equal(outcome.actual, true)
  t.equal(outcome.warnings, undefined)
})
