// Alerts in bounded memory (issue 27 finding 10: a rule with a unique dedup and a large alert
// context turned 3,000 records into +674 MB of memory, all read back at start). The book keeps each
// alert compact and reads its context from disk when it is read; a start reads the alert index
// snapshot and the journal past it, or the whole journal when the snapshot is damaged; the API
// reads (list, one alert with its context, its events) are the same before and after a restart.
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import pino from 'pino'
import t from 'tap'
import { AlertBook } from '../../src/detect/alert-book.js'
import { AlertReads } from '../../src/detect/alert-reads.js'
import { DetectionStore } from '../../src/detect/detection-store.js'
import type { RuleMeta } from '../../src/detect/grouping.js'
import { tempDir } from '../helpers/rulekeeper.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void
const heap = () => {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}
const MB = 1 << 20

const RECORDS = 3000
const rule: RuleMeta = {
  id: 'R.Amplify',
  kind: 'simple',
  revision: null,
  logTypes: ['Editor.Audit'],
  threshold: 1,
  dedupPeriodMinutes: 60,
  createAlert: true,
  summaryAttributes: ['user'],
  description: '',
  runbook: '',
  reference: '',
  outputIds: [],
}
/** About 40 KB of alert context, distinct per record (as a rule returning much of its event makes). */
const contextOf = (i: number) => ({
  items: Array.from({ length: 400 }, (_, j) => `record ${i} item ${j} ${'x'.repeat(80)}`),
})
const FILE = 'Editor.Audit/dt=2026-11-20/hour=10/a.ndjson'

async function writeRecords(dataDir: string): Promise<number[]> {
  const offsets: number[] = []
  let text = ''
  for (let i = 0; i < RECORDS; i++) {
    offsets.push(Buffer.byteLength(text))
    text += `${JSON.stringify({ user: `u${i}`, n: i, p_event_time: '2026-11-20T10:00:00.000Z' })}\n`
  }
  await mkdir(path.dirname(path.join(dataDir, 'logs', FILE)), { recursive: true })
  await writeFile(path.join(dataDir, 'logs', FILE), text)
  return offsets
}

/** Bytes of every file under `dir`. */
async function bytesUnder(dir: string): Promise<number> {
  let n = 0
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) n += (await stat(path.join(e.parentPath, e.name))).size
  return n
}

async function ingest(book: AlertBook, offsets: number[]): Promise<void> {
  const now = Date.parse('2026-11-20T10:30:00.000Z')
  for (let i = 0; i < RECORDS; i++) {
    book.addMatch(
      {
        file: FILE,
        offset: offsets[i]!,
        logType: 'Editor.Audit',
        eventTime: '2026-11-20T10:00:00.000Z',
        record: { user: `u${i}` },
      },
      rule,
      { title: `alert ${i}`, dedup: `dedup-${i}`, severity: 'HIGH', alertContext: contextOf(i) },
      now,
    )
    if (i % 500 === 499) await book.commit({ logs: { [FILE]: offsets[i]! + 1 }, records: 500 })
  }
}

/** What the API reads: every page of the list, one alert (with its context) and its events. */
async function apiReads(reads: AlertReads, o: { everyPage: boolean }) {
  const pages: unknown[] = []
  let after: { createdAt: string; id: string } | undefined
  for (;;) {
    const page = await reads.query({ limit: o.everyPage ? 1000 : 100, after })
    pages.push(...page.results)
    if (!page.next || !o.everyPage) break
    after = page.next
  }
  const some = pages[o.everyPage ? 1234 : 34] as { id: string }
  // As JSON text: a deep compare of 120 MB of contexts would cost more than the reads.
  return JSON.stringify({ pages, one: await reads.get(some.id), events: await reads.events(some.id, 0, 10) })
}

t.test(
  '3,000 alerts of 40 KB context: memory after ingest and after a restart, start time, reads unchanged',
  async (t) => {
    const dir = tempDir()
    const logger = pino({ level: 'silent' })
    const offsets = await writeRecords(dir)
    const base = heap()
    const store = await DetectionStore.open(dir, logger)
    const book = new AlertBook(store, { alertsPerRuleHour: 1_000_000 })
    await ingest(book, offsets)
    const ingested = heap() - base
    t.equal(book.alertCount, RECORDS)
    const reads = new AlertReads(book, path.join(dir, 'logs'))
    const before = await apiReads(reads, { everyPage: true })
    const firstPage = await apiReads(reads, { everyPage: false })
    const { one, events } = JSON.parse(before) as {
      one: { alertContext: unknown; title: string }
      events: { total: number }
    }
    t.same(one.alertContext, contextOf(Number(one.title.slice(6))), 'the context is read back whole')
    // Each context is stored once: in the match line of the match that opened its alert (it was
    // also copied to contexts/, doubling the disk a rule with a unique dedup and a large context costs).
    let contextBytes = 0
    for (let i = 0; i < RECORDS; i++) contextBytes += JSON.stringify(contextOf(i)).length
    const onDisk = await bytesUnder(path.join(dir, 'detections'))
    t.ok(
      onDisk < contextBytes * 1.2,
      `detection output ${(onDisk / MB).toFixed(1)} MB for ${(contextBytes / MB).toFixed(1)} MB of contexts`,
    )
    t.equal(events.total, 1)
    await book.close()

    const b0 = heap()
    const t0 = performance.now()
    const again = await DetectionStore.open(dir, logger)
    const book2 = new AlertBook(again, { alertsPerRuleHour: 1_000_000 })
    const startMs = performance.now() - t0
    const restarted = heap() - b0
    t.comment(
      `heap after ingest +${(ingested / MB).toFixed(1)} MB, after restart +${(restarted / MB).toFixed(1)} MB, start ${startMs.toFixed(0)} ms`,
    )
    // 3,000 × 40 KB of contexts is over 120 MB as text; the compact alerts are a few MB.
    t.ok(ingested < 25 * MB, `heap after ingest: +${(ingested / MB).toFixed(1)} MB`)
    t.ok(restarted < 25 * MB, `heap after restart: +${(restarted / MB).toFixed(1)} MB`)
    t.ok(startMs < 1500, `start: ${startMs.toFixed(0)} ms`)
    const after = await apiReads(new AlertReads(book2, path.join(dir, 'logs')), { everyPage: true })
    t.equal(after, before, 'list, one alert and its events are the same after the restart')
    await book2.close()

    // A damaged snapshot: the start reads the whole journal, and the reads are still right.
    const index = path.join(dir, 'detections', 'alert-index.json')
    const text = await readFile(index, 'utf8')
    await writeFile(index, text.slice(0, 200) + text.slice(260))
    const third = await DetectionStore.open(dir, logger)
    const book3 = new AlertBook(third, { alertsPerRuleHour: 1_000_000 })
    t.equal(
      await apiReads(new AlertReads(book3, path.join(dir, 'logs')), { everyPage: false }),
      firstPage,
      'a damaged snapshot: the full read is right',
    )
    await book3.close()
    // And no snapshot at all.
    await writeFile(index, 'not json')
    const fourth = await DetectionStore.open(dir, logger)
    const book4 = new AlertBook(fourth, { alertsPerRuleHour: 1_000_000 })
    t.equal(
      await apiReads(new AlertReads(book4, path.join(dir, 'logs')), { everyPage: false }),
      firstPage,
      'an unreadable snapshot: the full read is right',
    )
    await book4.close()
  },
)

t.test('a start reads the snapshot and only the journal after it', async (t) => {
  const dir = tempDir()
  const logger = pino({ level: 'silent' })
  const offsets = await writeRecords(dir)
  const store = await DetectionStore.open(dir, logger)
  const book = new AlertBook(store, { alertsPerRuleHour: 1_000_000 })
  await ingest(book, offsets)
  await book.close() // writes the snapshot
  const second = await DetectionStore.open(dir, logger)
  const book2 = new AlertBook(second, { alertsPerRuleHour: 1_000_000 })
  const [first] = book2.query({ limit: 1 }).results
  await book2.setStatus(first!.id, 'TRIAGED')
  await second.close() // a stop without the book's last snapshot, as after a kill
  // The lines the snapshot covers are never parsed again: spoil one and the start still works.
  const journals = Object.entries(second.checkpoint.outputs).filter(([f]) => f.startsWith('alerts/'))
  const [longest] = journals.sort(([, a], [, b]) => b - a)[0]!
  const covered = path.join(dir, 'detections', longest)
  const bytes = await readFile(covered)
  bytes.fill(0x2a, 10, 40)
  await writeFile(covered, bytes)
  const third = await DetectionStore.open(dir, logger)
  const book3 = new AlertBook(third, { alertsPerRuleHour: 1_000_000 })
  t.equal(book3.alertCount, RECORDS)
  t.equal(book3.alert(first!.id)?.status, 'TRIAGED', 'the change after the snapshot is read from the journal')
  const reads = new AlertReads(book3, path.join(dir, 'logs'))
  const one = (await reads.get(first!.id)) as { alertContext: unknown; title: string }
  t.same(one.alertContext, contextOf(Number(one.title.slice(6))), 'its context read back')
  await book3.close()
})

t.test('a journal of an earlier version (contexts inline) is read, its contexts from its lines', async (t) => {
  const dir = tempDir()
  const logger = pino({ level: 'silent' })
  const offsets = await writeRecords(dir)
  const store = await DetectionStore.open(dir, logger)
  const book = new AlertBook(store, { alertsPerRuleHour: 1_000_000 })
  book.addMatch(
    { file: FILE, offset: offsets[0]!, logType: 'Editor.Audit', eventTime: '2026-11-20T10:00:00.000Z', record: {} },
    rule,
    { title: 'old', dedup: 'old', severity: 'HIGH', alertContext: contextOf(7) },
    Date.parse('2026-11-20T10:30:00.000Z'),
  )
  await book.commit()
  const [g] = book.query({ limit: 1 }).results
  await book.close()
  // Rewrite the store as an earlier version left it: the context in the journal line, no contexts/ file.
  const det = path.join(dir, 'detections')
  const cp = JSON.parse(await readFile(path.join(det, 'checkpoint.json'), 'utf8'))
  const journal = Object.keys(cp.outputs).find((f) => f.startsWith('alerts/'))!
  const line = `${JSON.stringify({ ...g, contextAt: undefined, alertContext: contextOf(7) })}\n`
  await writeFile(path.join(det, journal), line)
  cp.outputs = { [journal]: Buffer.byteLength(line) }
  await writeFile(path.join(det, 'checkpoint.json'), JSON.stringify(cp))
  await writeFile(path.join(det, 'alert-index.json'), '')
  const old = await DetectionStore.open(dir, logger)
  const book2 = new AlertBook(old, {})
  const reads = new AlertReads(book2, path.join(dir, 'logs'))
  const view = (await reads.get(g!.id)) as { alertContext: unknown }
  t.same(view.alertContext, contextOf(7), 'the context read from the old journal line')
  t.equal(book2.alert(g!.id)?.alertContext, null, 'not held in memory')
  await book2.close()
})
