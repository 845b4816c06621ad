// A schedule's slots (query-slots.ts): RateMinutes periods aligned to the epoch; a CronExpression's
// slot is the latest minute it names (up to a day back), kept until the next one starts, so a slot
// whose minute passed while a run of the same query was still going runs when it can.
import t from 'tap'
import { queryScheduleOf, SlotClock } from '../../src/query/query-slots.js'

const at = (iso: string) => Date.parse(iso)

t.test('RateMinutes: the period a time falls in, the next period', async (t) => {
  const clock = new SlotClock({ rateMinutes: 15, timeoutMinutes: 1 }, 60_000)
  t.teardown(() => clock.close())
  t.equal(clock.slotAt(at('2026-11-20T10:07:30Z')), at('2026-11-20T10:00:00Z'))
  t.equal(clock.slotAt(at('2026-11-20T10:15:00Z')), at('2026-11-20T10:15:00Z'))
  t.equal(clock.nextSlot(at('2026-11-20T10:07:30Z')), at('2026-11-20T10:15:00Z'))
})

t.test('CronExpression: the latest named minute stays the slot until the next', async (t) => {
  const clock = new SlotClock({ cronExpression: '*/5 * * * *', timeoutMinutes: 1 }, 60_000)
  t.teardown(() => clock.close())
  t.equal(clock.slotAt(at('2026-11-20T10:05:10Z')), at('2026-11-20T10:05:00Z'), 'in its minute')
  // The minute passed (a manual run of the query was still going): the slot is still 10:05.
  t.equal(clock.slotAt(at('2026-11-20T10:07:45Z')), at('2026-11-20T10:05:00Z'), 'after its minute')
  t.equal(clock.slotAt(at('2026-11-20T10:10:00Z')), at('2026-11-20T10:10:00Z'), 'the next one')
  t.equal(clock.nextSlot(at('2026-11-20T10:07:45Z')), at('2026-11-20T10:10:00Z'))
  // Asked about an earlier time than before (a cached answer must not leak across).
  t.equal(clock.slotAt(at('2026-11-20T10:01:00Z')), at('2026-11-20T10:00:00Z'))
  t.equal(clock.nextSlot(at('2026-11-20T10:01:00Z')), at('2026-11-20T10:05:00Z'))
})

t.test('CronExpression: a day back at most; none named within a month is no next slot', async (t) => {
  const daily = new SlotClock({ cronExpression: '30 2 * * *', timeoutMinutes: 1 }, 60_000)
  t.teardown(() => daily.close())
  t.equal(daily.slotAt(at('2026-11-20T20:00:00Z')), at('2026-11-20T02:30:00Z'), 'earlier the same day')
  t.equal(daily.slotAt(at('2026-11-21T01:00:00Z')), at('2026-11-20T02:30:00Z'), 'within a day')
  const yearly = new SlotClock({ cronExpression: '0 0 1 1 *', timeoutMinutes: 1 }, 60_000)
  t.teardown(() => yearly.close())
  t.equal(yearly.slotAt(at('2026-03-05T00:00:00Z')), null, 'older than a day: not caught up')
  t.equal(yearly.nextSlot(at('2026-03-05T00:00:00Z')), null)
})

t.test('a Schedule is read as the format writes it', async (t) => {
  t.same(queryScheduleOf({ Schedule: { RateMinutes: 60, TimeoutMinutes: 5 } }), { rateMinutes: 60, timeoutMinutes: 5 })
  t.same(queryScheduleOf({ Schedule: { CronExpression: '0 * * * *', TimeoutMinutes: 5 } }), {
    cronExpression: '0 * * * *',
    timeoutMinutes: 5,
  })
  t.equal(queryScheduleOf({ Schedule: { CronExpression: '0 0 * * * *', TimeoutMinutes: 5 } }), null, 'six fields')
  t.equal(queryScheduleOf({ Schedule: { RateMinutes: 5, CronExpression: '* * * * *', TimeoutMinutes: 5 } }), null)
})
