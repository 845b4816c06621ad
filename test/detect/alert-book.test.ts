// The alert book (alert-book.ts), the one writer of detection output, over the DetectionLedger
// contract: behind every store of ledgers.ts (the file store, a store in memory, PostgreSQL). Each
// must give the same behaviour: output is published only
// once its commit is durable, a status change waits for the loop's commit while the loop holds the
// book, a failed commit fails whoever waits for it, and a book opened again over the ledger sees
// exactly what was committed.
import t from 'tap'
import { AlertBook } from '../../src/detect/alert-book.js'
import type { Group, RuleMeta } from '../../src/detect/grouping.js'
import { LEDGERS, MemoryLedger } from './ledgers.js'
import { ruleMeta, storedRecord } from './rule-meta.js'

const rule: RuleMeta = ruleMeta({ id: 'R.Book', threshold: 2 })
const fields = { title: 'a title', dedup: 'u@example.com', severity: 'HIGH', alertContext: {} }
const rec = storedRecord
const update = (offset: number) => ({ logs: { 'Editor.Audit/dt=2026-11-20/hour=10/a.ndjson': offset }, records: 1 })

// Over PostgreSQL the store decides groups in the commit (the hook hears of an alert inside it, and
// the alerts are read from the database): test/state/pg-groups.test.ts pins that behaviour.
for (const [name, make] of LEDGERS.filter(([n]) => n !== 'PostgreSQL store')) {
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
