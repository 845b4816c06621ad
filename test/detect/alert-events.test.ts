// GET /alerts/{id}/events through the alert-event index (alert-events.ts): an alert whose 500
// events span two event hours and several deliveries, beside another rule's alert in the same
// partitions, paged with limit 70 — every page in (data file, offset) order, the records exactly
// those of the alert; events committed after a first call show on the next (the index catches up);
// and an index bounded far below the matches (files dropped and read again) gives the same lists
// as a full read of the match partitions, and so do two first calls at once.
import t from 'tap'
import path from 'node:path'
import { AlertEventIndex } from '../../src/detect/alert-events.js'
import { readStoredLines } from '../../src/detect/stored-log.js'
import { commandRecord, commandRule, DETECT_ENV, sendAndDetect } from './helpers.js'
import { startInProcess } from '../helpers/in-process.js'
import type { DetectionStore } from '../../src/detect/detection-store.js'

const env = DETECT_ENV

t.test('events of an alert with many matches, paged, caught up, bounded', async (t) => {
  const s = await startInProcess({ env })
  t.teardown(() => s.close())
  await commandRule(s, 'E.Many', 'many', { dedupPeriodMinutes: 180 })
  await commandRule(s, 'E.Other', 'other', { dedupPeriodMinutes: 180 })
  const base = Date.parse('2026-11-20T10:30:00Z')
  const sent: string[] = []
  let k = 0
  const batch = (n: number) =>
    Array.from({ length: n }, (_, i) => {
      // event times back and forth across 10:00–12:00, the other rule's records between
      const name = i % 3 === 2 ? 'other' : 'many'
      const r = commandRecord('ev', name, new Date(base + ((k++ * 7919) % 5_400_000)).toISOString())
      if (name === 'many') sent.push((r.metadata as { id: string }).id)
      return r
    })
  for (let b = 0; b < 5; b++) await sendAndDetect(s, batch(150))
  const alerts = (await s.request('GET', '/alerts?rule-id=E.Many')).body.results as any[]
  t.equal(alerts.length, 1)
  const alert = alerts[0]
  t.equal(alert.eventCount, sent.length)

  const pages = async () => {
    const ids: string[] = []
    let cursor: string | null = null
    let n = 0
    do {
      const res = await s.request('GET', `/alerts/${alert.id}/events?limit=70${cursor ? `&cursor=${cursor}` : ''}`)
      t.equal(res.status, 200)
      ids.push(...res.body.results.map((r: any) => r.metadata.id))
      cursor = res.body.next
      n++
    } while (cursor)
    return { ids, pages: n }
  }
  // The model: the alert's matches from a full read of the partitions, in (data file, offset) order.
  const store = s.server.detection.store as DetectionStore // the default: the file store
  const model = async () => {
    const ms = await store.readMatches(
      Date.parse('2026-11-20T00:00:00Z'),
      Date.parse('2026-11-20T23:00:00Z'),
      (m) => m.alertId === alert.id,
    )
    return ms
      .map((m) => m.record as { partition: string; offset: number })
      .sort((a, b) => (a.partition !== b.partition ? (a.partition < b.partition ? -1 : 1) : a.offset - b.offset))
  }

  const first = await pages()
  t.equal(first.ids.length, sent.length, 'every event once')
  t.same([...first.ids].sort(), [...sent].sort(), 'exactly the records of the alert')
  t.equal(first.pages, Math.ceil(sent.length / 70))
  const where = await model()
  t.equal(where.length, sent.length)

  // More events for the same alert after the index has read the files.
  await sendAndDetect(s, batch(60))
  const second = await pages()
  t.equal(second.ids.length, sent.length, 'the events committed since the first call are there')
  t.same([...second.ids].sort(), [...sent].sort())

  // A bounded index (4 entries: every call drops the other files' indexes) gives the model's lists.
  const small = new AlertEventIndex(store, 4)
  const full = new AlertEventIndex(store)
  const group = s.server.detection.book.alert(alert.id)!
  const want = await model()
  const inOrder = (await readStoredLines(path.join(s.dataDir, 'logs'), want)).map((r: any) => r.metadata.id)
  t.same(second.ids, inOrder, 'the pages follow (data file, offset) order')
  t.same(await small.locations(group), want, 'bounded index: the same locations in the same order')
  const [x, y] = await Promise.all([full.locations(group), full.locations(group)])
  t.same(x, want, 'concurrent first calls: each line indexed once')
  t.same(y, want)
  t.same(await full.locations(group), want, 'unbounded index: the same')
  const other = (await s.request('GET', '/alerts?rule-id=E.Other')).body.results[0]
  const otherGroup = s.server.detection.book.alert(other.id)!
  t.equal((await small.locations(otherGroup)).length, other.eventCount)
  t.same(await small.locations(group), want, 'read again after being dropped')
  t.ok(full.size >= want.length + other.eventCount, `the full index holds every match (${full.size})`)
})
