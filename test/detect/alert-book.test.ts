// The alert book (alert-book.ts), the one writer of detection output, over the DetectionLedger
// contract: behind the file store (detection-store.ts) and behind a second store written here in
// memory, as a later store would be. Both must give the same behaviour: output is published only
// once its commit is durable, a status change waits for the loop's commit while the loop holds the
// book, a failed commit fails whoever waits for it, and a book opened again over the ledger sees
// exactly what was committed.
import pino from 'pino'
import t from 'tap'
import { AlertBook } from '../../src/detect/alert-book.js'
import type {
  Checkpoint,
  CheckpointUpdate,
  DetectionLedger,
  RuleErrorRecord,
} from '../../src/detect/detection-ledger.js'
import { DetectionStore } from '../../src/detect/detection-store.js'
import type { Group, RuleMeta } from '../../src/detect/grouping.js'
import { ruleMeta, storedRecord } from './rule-meta.js'
import type { Location } from '../../src/detect/stored-log.js'
import { tempDir } from '../helpers/rulekeeper.js'

/** A second store: everything in memory, a commit made durable when the test says so. */
class MemoryLedger implements DetectionLedger {
  checkpoint: Checkpoint = { version: 1, logs: {}, outputs: {}, lastKey: null, evaluatedAt: null, records: 0 }
  groups: Group[] = []
  errors: RuleErrorRecord[] = []
  matches: Array<Record<string, unknown>> = []
  private staged: { matches: Array<Record<string, unknown>>; groups: Group[]; errors: RuleErrorRecord[] } = {
    matches: [],
    groups: [],
    errors: [],
  }
  /** Commits not yet durable: `settle` makes the first durable (or fails it). */
  readonly pending: Array<{ ok: () => void; fail: (e: Error) => void }> = []
  autoSettle = true

  addMatch(_eventTime: string, match: Record<string, unknown> | string): undefined {
    this.staged.matches.push(typeof match === 'string' ? JSON.parse(match) : structuredClone(match))
    return undefined
  }
  addGroup(g: Group): void {
    this.staged.groups.push(structuredClone(g))
  }
  addError(e: RuleErrorRecord): void {
    this.staged.errors.push(e)
  }
  commit(update: CheckpointUpdate = {}): Promise<void> {
    const work = this.staged
    this.staged = { matches: [], groups: [], errors: [] }
    return new Promise<void>((done, fail) => {
      const ok = () => {
        this.matches.push(...work.matches)
        const byId = new Map(this.groups.map((g) => [g.id, g]))
        for (const g of work.groups) byId.set(g.id, g)
        this.groups = [...byId.values()]
        this.errors.push(...work.errors)
        this.checkpoint = {
          ...this.checkpoint,
          logs: { ...this.checkpoint.logs, ...update.logs },
          lastKey: update.lastKey === undefined ? this.checkpoint.lastKey : update.lastKey,
          records: this.checkpoint.records + (update.records ?? 0),
        }
        done()
      }
      if (this.autoSettle) queueMicrotask(ok)
      else this.pending.push({ ok, fail })
    })
  }
  async readMatches(_fromMs: number, _toMs: number, keep: (m: Record<string, unknown>) => boolean) {
    return this.matches.filter(keep)
  }
  async alertEvents(g: Group): Promise<Location[]> {
    return this.matches
      .filter((m) => m.alertId === g.id)
      .map((m) => m.record as Location)
      .sort((a, b) => (a.partition < b.partition ? -1 : a.partition > b.partition ? 1 : a.offset - b.offset))
  }
  async close(): Promise<void> {}
}

const rule: RuleMeta = ruleMeta({ id: 'R.Book', threshold: 2 })
const fields = { title: 'a title', dedup: 'u@example.com', severity: 'HIGH', alertContext: {} }
const rec = storedRecord
const update = (offset: number) => ({ logs: { 'Editor.Audit/dt=2026-11-20/hour=10/a.ndjson': offset }, records: 1 })

const stores: Array<[string, () => Promise<{ ledger: DetectionLedger; reopen: () => Promise<DetectionLedger> }>]> = [
  [
    'file store',
    async () => {
      const dir = tempDir()
      const logger = pino({ level: 'silent' })
      const ledger = await DetectionStore.open(dir, logger)
      return {
        ledger,
        reopen: async () => {
          await ledger.close()
          return DetectionStore.open(dir, logger)
        },
      }
    },
  ],
  [
    'memory store',
    async () => {
      const ledger = new MemoryLedger()
      return {
        ledger,
        reopen: async () => {
          const again = new MemoryLedger()
          again.checkpoint = ledger.checkpoint
          again.groups = ledger.groups
          again.errors = ledger.errors
          again.matches = ledger.matches
          return again
        },
      }
    },
  ],
]

for (const [name, make] of stores) {
  t.test(`${name}: output is published when durable, and a book over the same ledger sees it`, async (t) => {
    const { ledger, reopen } = await make()
    const created: string[] = []
    const committed: string[] = []
    const book = new AlertBook(ledger, {
      alertHook: { created: (g) => created.push(g.id), committed: (gs) => committed.push(...gs.map((g) => g.id)) },
    })
    book.hold() // a run of the loop
    book.addMatch(rec(0), rule, fields, Date.UTC(2026, 10, 20, 10))
    book.addMatch(rec(100), rule, fields, Date.UTC(2026, 10, 20, 10))
    book.addError({ ruleId: 'R.Other', revision: null, time: new Date().toISOString(), record: null, error: 'boom' })
    t.equal(book.alertCount, 1, 'the second match made an alert')
    const alert = book.query({ limit: 10 }).results[0]!
    t.same(created, [alert.id], 'the alert hook hears of it before its commit')
    t.same(committed, [], 'and of its commit only once durable')

    // A status change while the loop holds the book waits for the loop's commit.
    let patched: Group | undefined
    const patch = book.setStatus(alert.id, 'TRIAGED').then((g) => {
      patched = g
    })
    await new Promise((r) => setImmediate(r))
    t.equal(patched, undefined, 'not committed alone in the middle of a batch')
    t.equal(ledger.checkpoint.records, 0)
    await book.commit(update(200))
    await patch
    book.release()
    t.equal(patched?.status, 'TRIAGED', 'committed with the batch')
    t.same(committed, [alert.id])
    t.equal(ledger.checkpoint.logs['Editor.Audit/dt=2026-11-20/hour=10/a.ndjson'], 200, 'with the offsets reached')
    t.equal(book.ruleErrors.length, 1)
    t.same(
      (await book.eventLocations(alert)).map((l) => l.offset),
      [0, 100],
      "the alert's events",
    )

    // Not held: a status change is committed alone, at once.
    t.equal((await book.setStatus(alert.id, 'CLOSED'))?.status, 'CLOSED')
    t.equal(await book.setStatus('no-such-alert', 'CLOSED'), undefined)
    // Staged but never committed: gone after a restart.
    book.addMatch(rec(300), rule, { ...fields, dedup: 'other' }, Date.UTC(2026, 10, 20, 10))
    book.addMatch(rec(400), rule, { ...fields, dedup: 'other' }, Date.UTC(2026, 10, 20, 10))
    t.equal(book.alertCount, 2)

    const again = new AlertBook(await reopen(), {})
    t.equal(again.alertCount, 1, 'only the committed alert')
    t.equal(again.alert(alert.id)?.status, 'CLOSED', 'in its last committed state')
    t.equal(again.alert(alert.id)?.eventCount, 2)
    t.same(
      again.ruleErrors.map((e) => e.error),
      ['boom'],
    )
    t.equal(again.checkpoint.records, 1, 'the record count the batch committed')
    await book.close().catch(() => {})
    await again.close()
    await t.rejects(
      again.commitOutput({ matches: [], groups: [], created: [], errors: [] }),
      /closed/,
      'no output after close',
    )
  })
}

t.test('a failed commit fails who waits for it, and publishes nothing', async (t) => {
  const ledger = new MemoryLedger()
  const committed: Group[] = []
  const book = new AlertBook(ledger, { alertHook: { created: () => {}, committed: (gs) => committed.push(...gs) } })
  book.addMatch(rec(0), rule, fields, Date.UTC(2026, 10, 20, 10))
  book.addMatch(rec(100), rule, fields, Date.UTC(2026, 10, 20, 10))
  await book.commit(update(200))
  const alert = book.query({ limit: 1 }).results[0]!
  ledger.autoSettle = false
  const error = { ruleId: 'R.Book', revision: null, time: new Date().toISOString(), record: null, error: 'late' }
  const outside = book.commitOutput({ matches: [], groups: [], created: [], errors: [error] })
  const patch = book.setStatus(alert.id, 'RESOLVED')
  await new Promise((r) => setImmediate(r))
  t.equal(ledger.pending.length, 2, 'each committed alone, in order')
  for (const p of ledger.pending.splice(0)) p.fail(new Error('disk full'))
  await t.rejects(outside, /disk full/)
  await t.rejects(patch, /disk full/)
  t.equal(committed.length, 1, 'only the first alert was published as committed')
  t.same(ledger.errors, [], 'nothing of the failed commits is in the ledger')
})

t.test('a failed run rolls the groups back to what is durable: counts, new alerts, statuses', async (t) => {
  const ledger = new MemoryLedger()
  const book = new AlertBook(ledger, {})
  const at = Date.UTC(2026, 10, 20, 10)
  book.addMatch(rec(0), rule, fields, at)
  book.addMatch(rec(100), rule, fields, at)
  await book.commit(update(200))
  const alert = book.query({ limit: 1 }).results[0]!
  const durable = structuredClone(alert)
  t.equal(alert.eventCount, 2)

  // A run: the alert gains events and a summary, another opens, and a status change waits for it.
  ledger.autoSettle = false
  book.hold()
  const other = { ...fields, dedup: 'other@example.com' }
  book.addMatch(rec(200), rule, fields, at)
  book.addMatch(rec(300), rule, other, at)
  book.addMatch(rec(400), rule, other, at)
  const patch = book.setStatus(alert.id, 'RESOLVED')
  const failing = book.commit(update(500)) // staged, then it fails
  book.addMatch(rec(500), rule, fields, at) // queued after it (the loop runs on meanwhile)
  book.addMatch(rec(600), rule, { ...fields, dedup: 'third@example.com' }, at)
  t.equal(book.alertCount, 2, 'in memory: two alerts (the third group is below its threshold)')
  t.equal(alert.eventCount, 4)
  for (const p of ledger.pending.splice(0)) p.fail(new Error('disk full'))
  await t.rejects(failing, /disk full/)
  await t.rejects(patch, /disk full/)
  book.discardLoop()
  book.release()

  t.equal(book.alertCount, 1, 'the alert of the failed run is gone')
  t.same(
    [...book.groups.keys()],
    ledger.groups.map((g) => g.id),
    'the groups in memory are the durable ones',
  )
  t.equal(book.alert(alert.id), alert, 'the durable alert is the same object')
  t.same(structuredClone(alert), durable, 'with its durable count, status and times')
  t.same(book.query({ limit: 10, statuses: ['RESOLVED'] }).results, [], 'no alert listed under the failed status')
  t.same(
    book.query({ limit: 10, statuses: ['OPEN'] }).results.map((g) => g.id),
    [alert.id],
    'and listed under its durable one',
  )

  // Detection goes on from the checkpoint: the same records count once.
  ledger.autoSettle = true
  book.addMatch(rec(200), rule, fields, at)
  await book.commit(update(300))
  t.equal(alert.eventCount, 3, 'a record evaluated again counts once')
})
