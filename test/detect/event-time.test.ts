// eventTimeMs against Date.parse: every year 0000–9999 at the month ends and leap days, random
// instants from 1900 to 2200, and texts it must hand to Date.parse (other forms, roll-overs, junk).
import t from 'tap'
import { eventTimeMs } from '../../src/detect/event-time.js'

const same = (s: string) => Object.is(eventTimeMs(s), Date.parse(s))

t.test('equal to Date.parse', async (t) => {
  let bad: string[] = []
  for (let y = 0; y <= 9999; y++)
    for (const md of ['01-01', '02-28', '02-29', '03-01', '12-28', '12-31', '06-15'])
      for (const hms of ['00:00:00.000', '23:59:59.999', '13:14:15.678']) {
        const s = `${String(y).padStart(4, '0')}-${md}T${hms}Z`
        if (!same(s)) bad.push(s)
      }
  t.same(bad.slice(0, 5), [], 'years 0000–9999')
  bad = []
  let seed = 1
  for (let i = 0; i < 200_000; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648
    const s = new Date(Date.UTC(1900, 0, 1) + Math.floor((seed / 2147483648) * 9.5e12)).toISOString()
    if (!same(s)) bad.push(s)
  }
  t.same(bad.slice(0, 5), [], 'random instants')
  for (const s of [
    '2026-02-30T00:00:00.000Z',
    '2026-11-20T24:00:00.000Z',
    '2026-11-20T23:59:60.000Z',
    '2026-13-01T00:00:00.000Z',
    '2026-00-10T00:00:00.000Z',
    '2026-11-20T10:00:00Z',
    '2026-11-20T10:00:00.000+01:00',
    '+012026-11-20T10:00:00.000Z',
    '2026-11-2xT10:00:00.000Z',
    '2026/11/20T10:00:00.000Z',
    'not a time at all, 24 ch',
    '',
  ])
    t.ok(same(s), `${JSON.stringify(s)} → ${eventTimeMs(s)}`)
})
