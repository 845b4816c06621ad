// The DetectionLedger contract (detect/detection-ledger.ts), one suite run against every store of
// ledgers.ts (the file store, a store in memory, PostgreSQL): a commit makes what was staged before
// it durable with the checkpoint, a reopened store sees committed state only (the last state of
// each group, the rule errors, the matches by event hour), commits run in call order, and an
// alert's events and context are read back once committed.
import t from 'tap'
import type { DetectionLedger } from '../../src/detect/detection-ledger.js'
import { group, LEDGERS } from './ledgers.js'

const DAY = [Date.parse('2026-11-20T00:00:00Z'), Date.parse('2026-11-20T23:59:59Z')] as const

const match = (id: string, eventTime: string, over: Record<string, unknown> = {}) =>
  [eventTime, { id, ruleId: 'R.Contract', eventTime, ...over }] as const

const ids = async (l: DetectionLedger, from = DAY[0], to = DAY[1]) =>
  (await l.readMatches(from, to, () => true)).map((m) => m.id)

for (const [name, make] of LEDGERS) {
  t.test(
    `${name}: a commit is durable with its checkpoint; a reopened store sees only what was committed`,
    async (t) => {
      const { ledger, reopen } = await make()
      ledger.addMatch(...match('m1', '2026-11-20T10:00:00.000Z'))
      ledger.addMatch(...match('m2', '2026-11-20T11:00:00.000Z'))
      // Any JSON text: a NUL character (escaped) where the record put one.
      const [time3, fields3] = match('m3', '2026-11-20T10:30:00.000Z', { title: 'a\u0000b', alertId: null })
      ledger.addMatch(time3, JSON.stringify(fields3)) // a line given as its text (the loop's way)
      ledger.addGroup(group('g1', { eventCount: 2, dedup: 'nul\u0000' }))
      ledger.addError({
        ruleId: 'R.Err',
        revision: null,
        time: '2026-11-20T10:00:00.000Z',
        record: null,
        error: 'boom',
      })
      await ledger.commit({ logs: { 'a.ndjson': 10 }, records: 3, lastKey: 'k1' })
      t.same(ledger.checkpoint.logs, { 'a.ndjson': 10 })
      // Staged, never committed: gone after a restart.
      ledger.addMatch(...match('m4', '2026-11-20T10:00:00.000Z'))
      ledger.addGroup(group('g1', { eventCount: 9 }))
      ledger.addGroup(group('g2'))
      ledger.addError({
        ruleId: 'R.Err',
        revision: null,
        time: '2026-11-20T10:00:00.000Z',
        record: null,
        error: 'late',
      })
      const again = await reopen()
      t.teardown(() => again.close())
      t.same(again.checkpoint.logs, { 'a.ndjson': 10 }, 'the checkpoint committed')
      t.equal(again.checkpoint.records, 3)
      t.equal(again.checkpoint.lastKey, 'k1')
      t.same(
        again.groups.map((g) => [g.id, g.eventCount]),
        [['g1', 2]],
        'the groups committed, in their committed state',
      )
      t.same(
        again.errors.map((e) => e.error),
        ['boom'],
        'the rule errors committed',
      )
      t.same(await ids(again), ['m1', 'm3', 'm2'], 'the matches committed, by event hour')
      t.equal(again.groups[0]?.dedup, 'nul\u0000', 'a group keeps its text as it was')
      t.same(
        (await again.readMatches(...DAY, (m) => m.id === 'm3')).map((m) => m.title),
        ['a\u0000b'],
      )
    },
  )

  t.test(`${name}: the last committed state of a group wins; commits run in call order`, async (t) => {
    const { ledger, reopen } = await make()
    ledger.addGroup(group('g1', { eventCount: 1 }))
    const first = ledger.commit({ logs: { 'a.ndjson': 10 }, records: 1 })
    ledger.addGroup(group('g1', { eventCount: 5, status: 'TRIAGED' }))
    const second = ledger.commit({ logs: { 'a.ndjson': 20, 'b.ndjson': 5 }, records: 2 })
    await Promise.all([first, second])
    t.same(ledger.checkpoint.logs, { 'a.ndjson': 20, 'b.ndjson': 5 })
    t.equal(ledger.checkpoint.records, 3, 'each commit adds its records')
    const again = await reopen()
    t.teardown(() => again.close())
    t.same(
      again.groups.map((g) => [g.id, g.eventCount, g.status]),
      [['g1', 5, 'TRIAGED']],
    )
    t.same(again.checkpoint.logs, { 'a.ndjson': 20, 'b.ndjson': 5 })
  })

  t.test(`${name}: matches by event hour (both ends' hours included), filtered by keep and quick`, async (t) => {
    const { ledger } = await make()
    t.teardown(() => ledger.close())
    for (const [id, time] of [
      ['m09', '2026-11-20T09:59:59.000Z'],
      ['m10', '2026-11-20T10:30:00.000Z'],
      ['m11', '2026-11-20T11:59:59.999Z'],
      ['m12', '2026-11-20T12:00:00.000Z'],
      ['m21', '2026-11-21T11:00:00.000Z'],
    ] as const)
      ledger.addMatch(...match(id, time, { dedup: id === 'm11' ? 'x' : 'y' }))
    await ledger.commit({})
    const from = Date.parse('2026-11-20T10:15:00Z')
    const to = Date.parse('2026-11-20T11:05:00Z')
    t.same(await ids(ledger, from, to), ['m10', 'm11'], 'the hours 10 and 11 of that day')
    t.same(await ids(ledger, DAY[0], Date.parse('2026-11-22T00:00:00Z')), ['m09', 'm10', 'm11', 'm12', 'm21'])
    t.same(
      (await ledger.readMatches(from, to, (m) => m.dedup === 'x')).map((m) => m.id),
      ['m11'],
      'keep decides',
    )
    t.same(
      (
        await ledger.readMatches(
          from,
          to,
          () => true,
          (line) => line.includes('"m10"'),
        )
      ).map((m) => m.id),
      ['m10'],
      'quick drops lines by their text',
    )
  })

  t.test(`${name}: an alert's events are its committed matches, by data file then offset`, async (t) => {
    const { ledger } = await make()
    t.teardown(() => ledger.close())
    const g = group('g1', { firstEventTime: '2026-11-20T10:00:00.000Z', lastEventTime: '2026-11-20T11:00:00.000Z' })
    const rec = (partition: string, offset: number) => ({ alertId: 'g1', record: { partition, offset } })
    ledger.addMatch(...match('a', '2026-11-20T11:00:00.000Z', rec('b.ndjson', 5)))
    ledger.addMatch(...match('b', '2026-11-20T10:00:00.000Z', rec('b.ndjson', 1)))
    ledger.addMatch(...match('c', '2026-11-20T10:00:00.000Z', rec('a.ndjson', 900)))
    ledger.addMatch(
      ...match('d', '2026-11-20T10:00:00.000Z', { alertId: 'other', record: { partition: 'a.ndjson', offset: 0 } }),
    )
    ledger.addGroup(g)
    await ledger.commit({})
    ledger.addMatch(...match('e', '2026-11-20T10:00:00.000Z', rec('a.ndjson', 1))) // staged only
    t.same(await ledger.alertEvents(g), [
      { partition: 'a.ndjson', offset: 900 },
      { partition: 'b.ndjson', offset: 1 },
      { partition: 'b.ndjson', offset: 5 },
    ])
  })

  t.test(`${name}: a group's context is read back once committed, after a restart too`, async (t) => {
    const { ledger, reopen } = await make()
    if (!ledger.readContext) {
      await ledger.close()
      t.pass('this store keeps contexts in memory (no readContext)')
      return
    }
    const g = group('g1', { alertContext: { user: 'u@example.com', n: [1, 2] } })
    ledger.addGroup(g)
    await ledger.commit({})
    t.ok(g.contextAt, 'the group points at its stored context')
    t.same(await ledger.readContext(g.contextAt!), { user: 'u@example.com', n: [1, 2] })
    const again = await reopen()
    t.teardown(() => again.close())
    const back = again.groups[0]!
    t.equal(back.alertContext, null, 'not held in memory after a restart')
    t.same(await again.readContext!(back.contextAt!), { user: 'u@example.com', n: [1, 2] })
  })
}
