// Sequence evaluation, one table row per behaviour of detections.md §2.2 rule 6 and its edges:
// gaps of exactly W and L, ties, completion at the last required signal, absences before, after
// and in between, join values, unjoined steps, and the lookback anchored at the latest signal.
import t from 'tap'
import { link, outcomeOf, sequenceData, step, type Signals } from './helpers.js'

// A → B within 10 minutes on `user`, lookback 60.
const AB = sequenceData([step('A'), step('B')], [link('A', 'B', 10)], { LookbackWindowMinutes: 60 })
const AB_MIN3 = sequenceData([step('A', { MinMatchCount: 3 }), step('B')], [link('A', 'B', 10)], {
  LookbackWindowMinutes: 60,
})
const AB_BMIN2 = sequenceData([step('A'), step('B', { MinMatchCount: 2 })], [link('A', 'B', 10)], {
  LookbackWindowMinutes: 60,
})
const AB_BMAX1 = sequenceData([step('A'), step('B', { MaxMatchCount: 1 })], [link('A', 'B', 10)], {
  LookbackWindowMinutes: 60,
})
// A → B with no time frame: W defaults to L = 30.
const AB_DEFAULT_W = sequenceData([step('A'), step('B')], [link('A', 'B')], { LookbackWindowMinutes: 30 })
// A, then no C within 10.
const A_NOT_C = sequenceData([step('A'), step('C', { Absence: true })], [link('A', 'C', 10)], {
  LookbackWindowMinutes: 60,
})
// No X within 10 before A.
const NOT_X_A = sequenceData([step('X', { Absence: true }), step('A')], [link('X', 'A', 10)], {
  LookbackWindowMinutes: 60,
})
// A, no X within 10 after A, B within 10 + 10 of A.
const A_NOT_X_B = sequenceData(
  [step('A'), step('X', { Absence: true }), step('B')],
  [link('A', 'X', 10), link('X', 'B', 10)],
  { LookbackWindowMinutes: 60 },
)
// No transitions: an implicit chain, every step unjoined, W = L = 15.
const IMPLICIT = sequenceData([step('A'), step('B'), step('C')])
// A → B joined, B → C not: C is unjoined.
const PARTLY_JOINED = sequenceData([step('A'), step('B'), step('C')], [link('A', 'B', 10)], {
  LookbackWindowMinutes: 60,
})
// From/To transition: A's actor is B's target.
const FROM_TO = sequenceData([step('A'), step('B')], [link('A', 'B', 10, ['actor', 'target'])])
// §5.2: listed A, B but the transition goes B → A: B must come first.
const BA = sequenceData([step('A'), step('B')], [link('B', 'A', 10)], { LookbackWindowMinutes: 60 })
// §5.2: listed A, B, C, chained C → A (within 5) → B (within 20).
const C_A_B = sequenceData([step('A'), step('B'), step('C')], [link('A', 'B', 20), link('C', 'A', 5)], {
  LookbackWindowMinutes: 60,
})
// §5.2: listed A (absent), B; the transition B → A: B, then no A within 10.
const B_NOT_A = sequenceData([step('A', { Absence: true }), step('B')], [link('B', 'A', 10)], {
  LookbackWindowMinutes: 60,
})
// §5.2: a transition without Match: ordered and timed (10), but joining nothing.
const AB_NO_MATCH = sequenceData(
  [step('A'), step('B')],
  [{ ID: 'A then B', From: 'A', To: 'B', WithinTimeFrameMinutes: 10 }],
  {
    LookbackWindowMinutes: 60,
  },
)

interface Row {
  name: string
  rule: Record<string, unknown>
  signals: Signals | unknown[]
  expected: boolean
}

const rows: Row[] = [
  { name: 'B after A within W matches', rule: AB, signals: { A: { alice: [0] }, B: { alice: [5] } }, expected: true },
  { name: 'a gap of exactly W matches', rule: AB, signals: { A: { alice: [0] }, B: { alice: [10] } }, expected: true },
  {
    name: 'a gap of W + 1 does not match',
    rule: AB,
    signals: { A: { alice: [0] }, B: { alice: [11] } },
    expected: false,
  },
  {
    name: 'equal timestamps count as after',
    rule: AB,
    signals: { A: { alice: [5] }, B: { alice: [5] } },
    expected: true,
  },
  { name: 'B before A does not match', rule: AB, signals: { A: { alice: [5] }, B: { alice: [0] } }, expected: false },
  {
    name: 'a later A chains with a later B',
    rule: AB,
    signals: { A: { alice: [0, 30] }, B: { alice: [35] } },
    expected: true,
  },
  {
    name: 'steps with different join values do not chain',
    rule: AB,
    signals: { A: { alice: [0] }, B: { bob: [5] } },
    expected: false,
  },
  {
    name: 'of two join values only the one that completes matters (true)',
    rule: AB,
    signals: { A: { alice: [0], bob: [0] }, B: { alice: [30], bob: [5] } },
    expected: true,
  },
  {
    name: 'two join values that each fail do not combine into a match',
    rule: AB,
    signals: { A: { alice: [0], bob: [20] }, B: { alice: [25], bob: [10] } },
    expected: false,
  },
  { name: 'a missing step does not match', rule: AB, signals: { A: { alice: [0] } }, expected: false },
  { name: 'no signals at all is no match', rule: AB, signals: {}, expected: false },
  {
    name: 'MinMatchCount met matches',
    rule: AB_MIN3,
    signals: { A: { alice: [0, 1, 2] }, B: { alice: [5] } },
    expected: true,
  },
  {
    name: 'MinMatchCount not met does not match',
    rule: AB_MIN3,
    signals: { A: { alice: [0, 1] }, B: { alice: [5] } },
    expected: false,
  },
  {
    name: 'a step completes at the last required signal: the next must not start before it',
    rule: AB_MIN3,
    signals: { A: { alice: [0, 1, 8] }, B: { alice: [5] } },
    expected: false,
  },
  {
    name: 'W counts from the completion: exactly W after the third signal matches',
    rule: AB_MIN3,
    signals: { A: { alice: [0, 1, 2] }, B: { alice: [12] } },
    expected: true,
  },
  {
    name: 'W counts from the completion: W + 1 after the third signal does not match',
    rule: AB_MIN3,
    signals: { A: { alice: [0, 1, 2] }, B: { alice: [13] } },
    expected: false,
  },
  {
    name: 'any choice of signals counts, not just the first ones (late completion within W)',
    rule: AB_MIN3,
    signals: { A: { alice: [0, 1, 2, 30] }, B: { alice: [35] } },
    expected: true,
  },
  {
    name: 'only the first signal of a step must fall within W; it may complete later',
    rule: AB_BMIN2,
    signals: { A: { alice: [0] }, B: { alice: [5, 40] } },
    expected: true,
  },
  {
    name: 'signals of a step before the previous completion do not count toward it',
    rule: AB_BMIN2,
    signals: { A: { alice: [10] }, B: { alice: [5, 12] } },
    expected: false,
  },
  {
    name: 'MaxMatchCount respected matches',
    rule: AB_BMAX1,
    signals: { A: { alice: [0] }, B: { alice: [5] } },
    expected: true,
  },
  {
    name: 'more than MaxMatchCount signals fails',
    rule: AB_BMAX1,
    signals: { A: { alice: [0] }, B: { alice: [5, 6] } },
    expected: false,
  },
  {
    name: 'MaxMatchCount counts per join value',
    rule: AB_BMAX1,
    signals: { A: { alice: [0] }, B: { alice: [5], bob: [5, 6] } },
    expected: true,
  },
  {
    name: 'W defaults to L: a gap of exactly L matches',
    rule: AB_DEFAULT_W,
    signals: { A: { u: [0] }, B: { u: [30] } },
    expected: true,
  },
  {
    name: 'a signal older than R − L is not kept',
    rule: AB_DEFAULT_W,
    signals: { A: { u: [0] }, B: { u: [31] } },
    expected: false,
  },
  {
    name: 'the lookback is anchored at the latest signal of any step',
    rule: AB,
    signals: { A: { alice: [0], bob: [100] }, B: { alice: [5] } },
    expected: false,
  },
  {
    name: 'absent after: a signal inside W fails',
    rule: A_NOT_C,
    signals: { A: { alice: [0] }, C: { alice: [5] } },
    expected: false,
  },
  {
    name: 'absent after: a signal at exactly W fails',
    rule: A_NOT_C,
    signals: { A: { alice: [0] }, C: { alice: [10] } },
    expected: false,
  },
  {
    name: 'absent after: a signal at the same time fails',
    rule: A_NOT_C,
    signals: { A: { alice: [0] }, C: { alice: [0] } },
    expected: false,
  },
  {
    name: 'absent after: a signal after W matches',
    rule: A_NOT_C,
    signals: { A: { alice: [0] }, C: { alice: [11] } },
    expected: true,
  },
  {
    name: 'absent after: a signal before A does not count',
    rule: A_NOT_C,
    signals: { A: { alice: [5] }, C: { alice: [0] } },
    expected: true,
  },
  {
    name: 'absent after: a signal of another value does not count',
    rule: A_NOT_C,
    signals: { A: { alice: [0] }, C: { bob: [5] } },
    expected: true,
  },
  {
    name: 'absent after: a later A with a clear window still matches',
    rule: A_NOT_C,
    signals: { A: { alice: [0, 20] }, C: { alice: [5] } },
    expected: true,
  },
  { name: 'absent after: nothing absent matches', rule: A_NOT_C, signals: { A: { alice: [0] } }, expected: true },
  {
    name: 'absent before: a signal within W before fails',
    rule: NOT_X_A,
    signals: { X: { alice: [15] }, A: { alice: [20] } },
    expected: false,
  },
  {
    name: 'absent before: a signal exactly W before fails',
    rule: NOT_X_A,
    signals: { X: { alice: [10] }, A: { alice: [20] } },
    expected: false,
  },
  {
    name: 'absent before: a signal at the same time fails',
    rule: NOT_X_A,
    signals: { X: { alice: [20] }, A: { alice: [20] } },
    expected: false,
  },
  {
    name: 'absent before: a signal W + 1 before matches',
    rule: NOT_X_A,
    signals: { X: { alice: [9] }, A: { alice: [20] } },
    expected: true,
  },
  {
    name: 'absent before: a signal after A does not count',
    rule: NOT_X_A,
    signals: { X: { alice: [25] }, A: { alice: [20] } },
    expected: true,
  },
  {
    name: 'absent before: a later A with a clear lead-in matches',
    rule: NOT_X_A,
    signals: { X: { alice: [15] }, A: { alice: [20, 40] } },
    expected: true,
  },
  {
    name: 'absent before: a signal outside the lookback window does not count',
    rule: sequenceData([step('X', { Absence: true }), step('A')], [link('X', 'A', 30)], { LookbackWindowMinutes: 20 }),
    signals: { X: { alice: [0] }, A: { alice: [25] } },
    expected: true,
  },
  {
    name: 'absent in between: clear, B within the summed windows',
    rule: A_NOT_X_B,
    signals: { A: { u: [0] }, B: { u: [20] } },
    expected: true,
  },
  {
    name: 'absent in between: B past the summed windows',
    rule: A_NOT_X_B,
    signals: { A: { u: [0] }, B: { u: [21] } },
    expected: false,
  },
  {
    name: 'absent in between: a signal within W of A fails',
    rule: A_NOT_X_B,
    signals: { A: { u: [0] }, X: { u: [5] }, B: { u: [15] } },
    expected: false,
  },
  {
    name: 'absent in between: a signal past W of A does not count',
    rule: A_NOT_X_B,
    signals: { A: { u: [0] }, X: { u: [12] }, B: { u: [15] } },
    expected: true,
  },
  {
    name: 'a one-signal step must clear the absence before and the one after with the same signal',
    rule: sequenceData(
      [step('X', { Absence: true }), step('A'), step('Y', { Absence: true })],
      [link('X', 'A', 7), link('A', 'Y', 5)],
      { LookbackWindowMinutes: 60 },
    ),
    signals: { X: { u: [3] }, A: { u: [0, 6] }, Y: { u: [0] } },
    expected: false,
  },
  {
    name: 'a one-signal step completes only at a signal that may start it',
    rule: sequenceData([step('A'), step('B'), step('C')], [link('A', 'B', 1), link('B', 'C', 2)], {
      LookbackWindowMinutes: 60,
    }),
    signals: { A: { u: [10] }, B: { u: [2, 10, 19] }, C: { u: [21] } },
    expected: false,
  },
  {
    name: 'implicit chain: unjoined steps match any value',
    rule: IMPLICIT,
    signals: { A: { a: [0] }, B: { b: [1] }, C: { c: [2] } },
    expected: true,
  },
  {
    name: 'implicit chain: order still matters',
    rule: IMPLICIT,
    signals: { A: { a: [0] }, B: { b: [3] }, C: { c: [2] } },
    expected: false,
  },
  {
    name: 'implicit chain: three equal timestamps chain',
    rule: IMPLICIT,
    signals: { A: { a: [7] }, B: { b: [7] }, C: { c: [7] } },
    expected: true,
  },
  {
    name: 'an unjoined step matches whatever value the joined ones share',
    rule: PARTLY_JOINED,
    signals: { A: { alice: [0] }, B: { alice: [5] }, C: { bob: [8] } },
    expected: true,
  },
  {
    name: 'From/To: the From field of the first step joins the To field of the next',
    rule: FROM_TO,
    signals: [
      { ID: 'A', Matches: { actor: { alice: [0] } } },
      { ID: 'B', Matches: { target: { alice: [5] } } },
    ],
    expected: true,
  },
  {
    name: 'From/To: a signal on the other side’s field is dropped, not joined',
    rule: FROM_TO,
    signals: [
      { ID: 'A', Matches: { actor: { alice: [0] } } },
      { ID: 'B', Matches: { actor: { alice: [5] } } },
    ],
    expected: false,
  },
  {
    name: 'RFC 3339: a gap of exactly W matches',
    rule: AB,
    signals: { A: { alice: ['2026-11-20T08:00:00Z'] }, B: { alice: ['2026-11-20T08:10:00Z'] } },
    expected: true,
  },
  {
    name: 'RFC 3339: a gap of W plus a millisecond does not match',
    rule: AB,
    signals: { A: { alice: ['2026-11-20T08:00:00Z'] }, B: { alice: ['2026-11-20T08:10:00.001Z'] } },
    expected: false,
  },
  {
    name: 'RFC 3339: offsets are honoured (09:00+01:00 equals 08:00Z, a tie)',
    rule: AB,
    signals: { A: { alice: ['2026-11-20T08:00:00Z'] }, B: { alice: ['2026-11-20T09:00:00+01:00'] } },
    expected: true,
  },
  // §5.2: the order is the transitions' From → To, not the list's.
  { name: 'B → A: B then A matches', rule: BA, signals: { A: { alice: [5] }, B: { alice: [0] } }, expected: true },
  {
    name: 'B → A: A then B (the list order) does not match',
    rule: BA,
    signals: { A: { alice: [0] }, B: { alice: [5] } },
    expected: false,
  },
  {
    name: 'B → A: the transition’s window applies (A 11 after B does not match)',
    rule: BA,
    signals: { A: { alice: [11] }, B: { alice: [0] } },
    expected: false,
  },
  {
    name: 'C → A → B: C, A, B within their windows matches',
    rule: C_A_B,
    signals: { C: { alice: [0] }, A: { alice: [5] }, B: { alice: [25] } },
    expected: true,
  },
  {
    name: 'C → A → B: the list order A, B, C does not match',
    rule: C_A_B,
    signals: { A: { alice: [0] }, B: { alice: [5] }, C: { alice: [10] } },
    expected: false,
  },
  {
    name: 'C → A → B: each link keeps its own window (A 6 after C does not match)',
    rule: C_A_B,
    signals: { C: { alice: [0] }, A: { alice: [6] }, B: { alice: [10] } },
    expected: false,
  },
  {
    name: 'B then no A: an A within 10 after B fails it',
    rule: B_NOT_A,
    signals: { B: { alice: [0] }, A: { alice: [4] } },
    expected: false,
  },
  {
    name: 'B then no A: an A before B does not matter (it is not the list’s first step)',
    rule: B_NOT_A,
    signals: { A: { alice: [0] }, B: { alice: [5] } },
    expected: true,
  },
  {
    name: 'no Match: the steps are unjoined, so different values chain',
    rule: AB_NO_MATCH,
    signals: { A: { alice: [0] }, B: { bob: [5] } },
    expected: true,
  },
  {
    name: 'no Match: the window still applies',
    rule: AB_NO_MATCH,
    signals: { A: { alice: [0] }, B: { bob: [11] } },
    expected: false,
  },
  {
    name: 'RFC 3339: B one second before A does not match',
    rule: AB,
    signals: { A: { alice: ['2026-11-20T08:00:01Z'] }, B: { alice: ['2026-11-20T08:00:00Z'] } },
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
