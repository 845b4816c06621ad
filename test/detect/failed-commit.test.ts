// Detection output after a failed commit (issue 27, "What to build" 7: no match written twice): a
// commit of the file store that fails takes back what it appended, and a log-reading loop whose run
// fails drops what it queued past the checkpoint, so neither a later commit (a status change, a
// correlation run's rule error) nor the next start's evaluation from the checkpoint writes a match
// or an event a second time. The failure is a real one: a match partition folder that is a file.
import { cp, mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import pino from 'pino'
import t from 'tap'
import { AlertBook } from '../../src/detect/alert-book.js'
import { DetectionStore } from '../../src/detect/detection-store.js'
import { Detector } from '../../src/detect/detector.js'
import { simpleEngine } from '../../src/engine/simple/index.js'
import { startInProcess } from '../helpers/in-process.js'
import { tempDir } from '../helpers/rulekeeper.js'
import { commandRecord, commandRule, DETECT_ENV, sendAndDetect } from './helpers.js'

const logger = pino({ level: 'silent' })
const DAY = [Date.parse('2026-11-20T00:00:00Z'), Date.parse('2026-11-20T23:59:59Z')] as const

/** A folder the store must create, made a file: the commit writing there fails (ENOTDIR / EEXIST). */
async function block(dataDir: string, hour: string): Promise<string> {
  const p = path.join(dataDir, 'detections', 'matches', 'dt=2026-11-20', `hour=${hour}`)
  await mkdir(path.dirname(p), { recursive: true })
  await writeFile(p, '')
  return p
}

t.test('a failed commit of the file store leaves nothing behind that a later commit makes durable', async (t) => {
  const dataDir = tempDir('rk-failed-commit-')
  const store = await DetectionStore.open(dataDir, logger)
  const match = (id: string, hour: string) =>
    [`2026-11-20T${hour}:00:00.000Z`, { id, ruleId: 'R', eventTime: `2026-11-20T${hour}:00:00.000Z` }] as const
  const blocked = await block(dataDir, '11') // after the open (which would not list a file there)
  store.addMatch(...match('m1', '10')) // its file is written and fdatasynced…
  store.addMatch(...match('m2', '11')) // …this one cannot be created
  await t.rejects(store.commit({ logs: { 'a.ndjson': 100 } }), 'the commit fails')
  t.same(store.checkpoint.logs, {}, 'the checkpoint did not move')
  await rm(blocked)
  store.addMatch(...match('m3', '10'))
  await store.commit({ logs: { 'b.ndjson': 50 } })
  const ids = async (s: DetectionStore) => (await s.readMatches(DAY[0], DAY[1], () => true)).map((m) => m.id)
  t.same(await ids(store), ['m3'], 'the failed commit’s match is not committed by the next one')
  await store.close()
  const again = await DetectionStore.open(dataDir, logger)
  t.same(await ids(again), ['m3'], 'nor after a restart')
  await again.close()
})

t.test('after a failed commit, an alert context is read back from the offset handed out for it', async (t) => {
  const dataDir = tempDir('rk-failed-offsets-')
  const store = await DetectionStore.open(dataDir, logger)
  const line = (id: string, hour: string) =>
    JSON.stringify({ id, eventTime: `2026-11-20T${hour}:00:00.000Z`, alertContext: { id, pad: 'x'.repeat(100) } })
  const blocked = await block(dataDir, '11')
  store.addMatch('2026-11-20T10:00:00.000Z', line('m1', '10')) // written, then cut back
  store.addMatch('2026-11-20T11:00:00.000Z', line('m2', '11')) // cannot be created
  await t.rejects(store.commit({}), 'the commit fails')
  await rm(blocked)
  const ref = store.addMatch('2026-11-20T10:00:00.000Z', line('m3', '10'))!
  await store.commit({})
  t.same(await store.readContext(ref), { id: 'm3', pad: 'x'.repeat(100) }, 'the context of the line staged after it')
  await store.close()
})

t.test('lines staged while a commit fails: no later commit writes them at offsets already handed out', async (t) => {
  const dataDir = tempDir('rk-failed-staged-')
  const store = await DetectionStore.open(dataDir, logger)
  const blocked = await block(dataDir, '11')
  store.addMatch('2026-11-20T10:00:00.000Z', { id: 'm1', alertContext: {} })
  store.addMatch('2026-11-20T11:00:00.000Z', { id: 'm2', alertContext: {} })
  const failing = store.commit({})
  store.addMatch('2026-11-20T10:00:00.000Z', { id: 'm3', alertContext: {} }) // its offset counts m1's bytes
  await t.rejects(failing)
  await rm(blocked)
  await t.rejects(store.commit({}), /no more commits until a restart/, 'refused, not written at the wrong offset')
  await store.close()
})

t.test(
  'a detection run that fails: no match or event written twice, by a later commit or the next start',
  async (t) => {
    // The stored log comes from the real ingest route (a server in process, its own detection aside).
    const s = await startInProcess({ env: DETECT_ENV })
    t.teardown(() => s.close())
    await commandRule(s, 'F.Cmd', 'fail-cmd', { threshold: 1, dedupPeriodMinutes: 60 })
    const records = Array.from({ length: 12 }, (_, i) =>
      // the first two (the first commit) open an alert; the rest, an hour later, open another
      commandRecord('fc', 'fail-cmd', `2026-11-20T${i < 2 ? 10 : 11}:00:${String(i).padStart(2, '0')}Z`),
    )
    await sendAndDetect(s, records)
    const dataDir = tempDir('rk-failed-run-')
    await cp(path.join(s.dataDir, 'logs'), path.join(dataDir, 'logs'), { recursive: true })

    // A loop of our own over a copy of that log: two records per commit, so when the first commit
    // fails the run has already queued the matches of the records after it.
    const life = async (opened: () => Promise<unknown> = async () => {}) => {
      const store = await DetectionStore.open(dataDir, logger)
      await opened()
      const committed: string[] = []
      const book = new AlertBook(store, {
        alertHook: { created: () => {}, committed: (gs) => committed.push(...gs.map((g) => g.id)) },
      })
      const detector = new Detector({
        dataDir,
        logTypes: ['Editor.Audit'],
        catalog: s.server.catalog,
        engines: { simple: simpleEngine },
        book,
        logger,
        batchRecords: 2,
        ruleWorker: false,
      })
      await detector.start()
      await detector.idle()
      return { store, book, detector, committed }
    }
    let blocked = ''
    const first = await life(async () => {
      blocked = await block(dataDir, '10')
    })
    t.equal(first.detector.status().failed, true, 'the first commit failed: detection stopped')
    t.equal(first.store.checkpoint.records, 0, 'nothing committed')
    t.equal(first.book.alertCount, 0, 'no alert of the failed run is listed (none is durable)')
    t.same([...first.book.groups.keys()], [], 'nor any group it opened')
    await rm(blocked)
    // Output made beside the stopped loop is still committed (a correlation run's skipped-run error).
    const error = { ruleId: 'C.Any', revision: null, time: new Date().toISOString(), record: null, error: 'skipped' }
    await first.book.commitOutput({ matches: [], groups: [], created: [], errors: [error] })
    first.detector.notify([]) // another batch announced: a stopped loop does not run again
    await first.detector.idle()
    t.equal(first.store.checkpoint.records, 0, 'the stopped loop committed nothing more')
    t.same(first.committed, [], 'no alert of the failed run is told to the alert hook as committed')
    await first.detector.close()
    await first.book.close()

    const second = await life()
    t.equal(second.detector.status().failed, false, 'the next start catches up from the checkpoint')
    const ours = (await second.store.readMatches(DAY[0], DAY[1], (m) => m.ruleId === 'F.Cmd')).map(
      (m) => m.id as string,
    )
    t.equal(new Set(ours).size, ours.length, 'no match id twice')
    t.equal(ours.length, records.length, 'one match per record')
    const alerts = second.book
      .query({ limit: 10, ruleIds: ['F.Cmd'] })
      .results.sort((a, b) => (a.firstEventTime < b.firstEventTime ? -1 : 1))
    t.same(
      alerts.map((a) => a.eventCount),
      [2, records.length - 2],
      'two alerts counting each record once',
    )
    t.same(second.committed.sort(), alerts.map((a) => a.id).sort(), 'committed (and told) by the next start')
    t.same(
      second.book.ruleErrors.map((e) => e.error).filter((e) => e === 'skipped'),
      ['skipped'],
      'the outside output was committed',
    )
    await second.detector.close()
    await second.book.close()
  },
)
