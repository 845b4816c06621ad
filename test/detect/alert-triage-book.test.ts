// Triage changes in the alert book (alert-book.ts `change`, alert-triage.ts): several alerts changed
// in one commit, a change made while the loop holds the book joins the loop's commit, a failed run
// rolls the assignee, comments and history back to what is durable (like the status), and a book
// opened again over the file store (journal, then snapshot) has them as committed.
import fs from 'node:fs'
import path from 'node:path'
import pino from 'pino'
import t from 'tap'
import { AlertBook } from '../../src/detect/alert-book.js'
import { INDEX_FILE } from '../../src/detect/alert-journal.js'
import type { TriageActor } from '../../src/detect/alert-triage.js'
import type { Checkpoint, CheckpointUpdate, DetectionLedger } from '../../src/detect/detection-ledger.js'
import { DetectionStore } from '../../src/detect/detection-store.js'
import type { Group } from '../../src/detect/grouping.js'
import { tempDir } from '../helpers/rulekeeper.js'
import { ruleMeta, storedRecord } from './rule-meta.js'

const rule = ruleMeta({ id: 'R.Triage', threshold: 1 })
const at = Date.UTC(2026, 10, 20, 10)
const fields = (dedup: string) => ({ title: 'a title', dedup, severity: 'HIGH', alertContext: {} })
const update = (offset: number) => ({ logs: { 'Editor.Audit/dt=2026-11-20/hour=10/a.ndjson': offset }, records: 1 })
const dana: TriageActor = { id: 'tok-1', type: 'api-token', name: 'dana' }

/** A ledger in memory whose commits settle when the test says (or fail). */
class HeldLedger implements DetectionLedger {
  checkpoint: Checkpoint = { version: 1, logs: {}, outputs: {}, lastKey: null, evaluatedAt: null, records: 0 }
  groups: Group[] = []
  errors = []
  commits = 0
  private staged: Group[] = []
  readonly pending: Array<{ ok: () => void; fail: (e: Error) => void }> = []
  autoSettle = true
  addMatch(): undefined {
    return undefined
  }
  addGroup(g: Group): void {
    this.staged.push(structuredClone(g))
  }
  addError(): void {}
  commit(_u: CheckpointUpdate = {}): Promise<void> {
    const work = this.staged
    this.staged = []
    this.commits++
    return new Promise<void>((done, fail) => {
      const ok = () => {
        const byId = new Map(this.groups.map((g) => [g.id, g]))
        for (const g of work) byId.set(g.id, g)
        this.groups = [...byId.values()]
        done()
      }
      if (this.autoSettle) queueMicrotask(ok)
      else this.pending.push({ ok, fail })
    })
  }
  async readMatches() {
    return []
  }
  async alertEvents() {
    return []
  }
  async close(): Promise<void> {}
}

t.test('several alerts in one commit; unknown ids are undefined', async (t) => {
  const ledger = new HeldLedger()
  const book = new AlertBook(ledger, {})
  for (const [i, u] of ['a', 'b', 'c'].entries()) book.addMatch(storedRecord(i * 100), rule, fields(u), at)
  await book.commit(update(300))
  const ids = book.query({ limit: 10 }).results.map((g) => g.id)
  const before = ledger.commits
  const out = await book.change([...ids, 'nope'], { status: 'RESOLVED', actor: dana })
  t.equal(ledger.commits, before + 1, 'one commit')
  t.same(
    out.map((g) => g?.status),
    ['RESOLVED', 'RESOLVED', 'RESOLVED', undefined],
  )
  t.same(
    ledger.groups.map((g) => g.history?.map((h) => [h.field, h.from, h.to, h.actor.name])),
    [
      [['status', 'OPEN', 'RESOLVED', 'dana']],
      [['status', 'OPEN', 'RESOLVED', 'dana']],
      [['status', 'OPEN', 'RESOLVED', 'dana']],
    ],
    'durable with the history',
  )
  t.same(await book.change(['nope'], { assignee: 'x', actor: dana }), [undefined], 'nothing to change: no commit')
  t.equal(ledger.commits, before + 1)
})

t.test('a failed run rolls the triage back to what is durable', async (t) => {
  const ledger = new HeldLedger()
  const book = new AlertBook(ledger, {})
  book.addMatch(storedRecord(0), rule, fields('a'), at)
  await book.commit(update(100))
  const alert = book.query({ limit: 1 }).results[0]!
  await book.change([alert.id], { assignee: 'dana', comment: { id: 'c1', text: 'first' }, actor: dana })
  const durable = structuredClone(alert)
  ledger.autoSettle = false
  book.hold()
  book.addMatch(storedRecord(100), rule, fields('a'), at)
  const change = book.change([alert.id], {
    assignee: null,
    status: 'CLOSED',
    comment: { id: 'c2', text: 'second' },
    actor: dana,
  })
  t.equal(alert.assignee, 'dana', 'waits for the loop’s commit')
  const failing = book.commit(update(200))
  t.equal(alert.assignee, null, 'applied at the loop’s commit')
  t.equal(alert.comments?.length, 2)
  for (const p of ledger.pending.splice(0)) p.fail(new Error('disk full'))
  await t.rejects(failing, /disk full/)
  await t.rejects(change, /disk full/)
  book.discardLoop()
  book.release()
  t.same(structuredClone(alert), durable, 'assignee, comments, history and status as durable')
  t.same(book.query({ limit: 10, statuses: ['CLOSED'] }).results, [], 'not listed under the failed status')
})

t.test('the file store: a book opened again has the triage (journal, then snapshot)', async (t) => {
  const dir = tempDir('rk-triage-book-')
  const logger = pino({ level: 'silent' })
  let ledger = await DetectionStore.open(dir, logger)
  let book = new AlertBook(ledger, {})
  book.addMatch(storedRecord(0), rule, fields('a'), at)
  await book.commit(update(100))
  const id = book.query({ limit: 1 }).results[0]!.id
  await book.change([id], { assignee: 'eli', comment: { id: 'c1', text: 'Line one\nline two' }, actor: dana })
  await book.change([id], { status: 'TRIAGED', actor: dana })
  const want = structuredClone(book.alert(id))
  for (const how of ['journal', 'snapshot']) {
    await book.close()
    // The close wrote a snapshot: without it, the journal alone is read.
    if (how === 'journal') t.ok(fs.existsSync(path.join(dir, 'detections', INDEX_FILE)))
    if (how === 'journal') fs.rmSync(path.join(dir, 'detections', INDEX_FILE))
    ledger = await DetectionStore.open(dir, logger)
    book = new AlertBook(ledger, {})
    const got = book.alert(id)!
    t.same(
      { assignee: got.assignee, comments: got.comments, history: got.history, status: got.status },
      { assignee: want!.assignee, comments: want!.comments, history: want!.history, status: want!.status },
      how,
    )
  }
  await book.close()
})
