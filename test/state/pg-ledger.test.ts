// What the PostgreSQL ledger (src/state/pg-ledger.ts) adds to the contract's suite
// (test/detect/ledger-contract.test.ts): a commit whose connection is killed in the middle of its
// transaction (pg_terminate_backend, after its match, group and error rows were written and
// before its checkpoint) leaves nothing of it behind, and the next commit goes through on a new
// connection, and the alert book over it drops the run and counts its records once after a restart;
// replicas on one database keep their own checkpoints and share groups, matches and errors; matches
// are read back in pages.
import pg from 'pg'
import pino from 'pino'
import t from 'tap'
import { PgLedger } from '../../src/state/pg-ledger.js'
import { AlertBook } from '../../src/detect/alert-book.js'
import { group, pgLedger, pgRows } from '../detect/ledgers.js'
import { ruleMeta, storedRecord } from '../detect/rule-meta.js'
import { waitFor } from '../helpers/wait.js'

const logger = pino({ level: 'silent' })
const match = (id: string, alertId: string | null = null) =>
  ['2026-11-20T10:00:00.000Z', { id, ruleId: 'R', eventTime: '2026-11-20T10:00:00.000Z', alertId }] as const
const DAY = [Date.parse('2026-11-20T00:00:00Z'), Date.parse('2026-11-20T23:59:59Z')] as const

/** Holds the checkpoint table so commits wait there, after writing their rows; `kill` ends the one waiting. */
async function blockCheckpoints(url: string) {
  const blocker = new pg.Client({ connectionString: url })
  await blocker.connect()
  await blocker.query('BEGIN')
  await blocker.query('LOCK TABLE detection_checkpoints IN EXCLUSIVE MODE')
  return {
    kill: async () => {
      const pid = await waitFor('a commit to wait at its checkpoint', async () => {
        const { rows } = await blocker.query(
          "SELECT pid FROM pg_locks WHERE NOT granted AND relation = 'detection_checkpoints'::regclass",
        )
        return rows[0]?.pid as number | undefined
      })
      return (await blocker.query('SELECT pg_terminate_backend($1) AS ok', [pid])).rows[0].ok as boolean
    },
    release: async () => {
      await blocker.query('ROLLBACK')
      await blocker.end()
    },
  }
}

t.test('a commit killed mid-transaction leaves nothing half-written; the next one goes through', async (t) => {
  const { url, ledger, reopen } = await pgLedger()
  ledger.addMatch(...match('m1', 'g1'))
  ledger.addGroup(group('g1', { alertContext: { a: 1 } }))
  await ledger.commit({ logs: { 'a.ndjson': 10 }, records: 1 })
  const before = await pgRows(url)
  t.same(before, {
    detection_matches: 1,
    alert_groups: 1,
    alert_contexts: 1,
    rule_errors: 0,
    detection_checkpoints: 1,
    deliveries: 0,
  })

  // The checkpoint's table locked: the commit writes its lines, then waits at its checkpoint.
  const block = await blockCheckpoints(url)
  ledger.addMatch(...match('m2', 'g1'))
  ledger.addMatch(...match('m3', 'g2'))
  ledger.addGroup(group('g1', { eventCount: 2 }))
  ledger.addGroup(group('g2', { alertContext: { b: 2 } }))
  ledger.addError({ ruleId: 'R', revision: null, time: '2026-11-20T10:00:00.000Z', record: null, error: 'boom' })
  const failing = ledger.commit({ logs: { 'a.ndjson': 30 }, records: 2 })
  t.ok(await block.kill(), 'the commit killed between its rows and its checkpoint')
  await t.rejects(failing, 'the commit fails')
  await block.release()
  t.same(await pgRows(url), before, 'no row of the failed commit is in the database')
  t.same(ledger.checkpoint.logs, { 'a.ndjson': 10 }, 'the checkpoint did not move')

  // The next commit opens a new connection; a restart sees the first and the third commit only.
  ledger.addMatch(...match('m4', 'g1'))
  ledger.addGroup(group('g1', { eventCount: 2 }))
  await ledger.commit({ logs: { 'a.ndjson': 40 }, records: 1 })
  const again = await reopen()
  t.teardown(() => again.close())
  t.same(again.checkpoint.logs, { 'a.ndjson': 40 })
  t.equal(again.checkpoint.records, 2)
  t.same(
    (await again.readMatches(DAY[0], DAY[1], () => true)).map((m) => m.id),
    ['m1', 'm4'],
  )
  t.same(
    again.groups.map((g) => [g.id, g.eventCount]),
    [['g1', 2]],
  )
  t.same(again.errors, [])
})

t.test('replicas on one database: a checkpoint each, the groups, matches and errors shared', async (t) => {
  const { url, ledger: a } = await pgLedger('replica-a')
  const b = await PgLedger.connect({ url, replica: 'replica-b' }, logger)
  t.teardown(async () => {
    await a.close()
    await b.close()
  })
  a.addMatch(...match('from-a', 'g1'))
  a.addGroup(group('g1'))
  await a.commit({ logs: { 'a.ndjson': 10 }, records: 1 })
  b.addMatch(...match('from-b', 'g2'))
  b.addGroup(group('g2'))
  b.addError({ ruleId: 'R', revision: null, time: '2026-11-20T10:00:00.000Z', record: null, error: 'on b' })
  await b.commit({ logs: { 'b.ndjson': 7 }, records: 1 })
  const a2 = await PgLedger.connect({ url, replica: 'replica-a' }, logger)
  t.teardown(() => a2.close())
  t.same(a2.checkpoint.logs, { 'a.ndjson': 10 }, "replica a's own checkpoint")
  t.same(
    a2.groups.map((g) => g.id),
    ['g1', 'g2'],
    'every replica sees every group',
  )
  t.same(
    a2.errors.map((e) => e.error),
    ['on b'],
  )
  t.same(
    (await a2.readMatches(DAY[0], DAY[1], () => true)).map((m) => m.id),
    ['from-a', 'from-b'],
  )
})

t.test('a database that cannot be reached is a clear error at open', async (t) => {
  await t.rejects(
    PgLedger.connect(
      { url: 'postgresql://nobody@/none?host=/nonexistent-dir', replica: 'r', connectTimeoutMs: 2000 },
      logger,
    ),
    /the PostgreSQL state store cannot be opened/,
  )
})

t.test('matches are read in pages: every line of a long span, once, in order', async (t) => {
  const { ledger } = await pgLedger()
  t.teardown(() => ledger.close())
  const n = 12_345 // more than two pages of readMatches
  for (let i = 0; i < n; i++) {
    const time = `2026-11-20T1${i % 3}:00:00.000Z`
    ledger.addMatch(time, { id: `m${i}`, ruleId: 'R', eventTime: time, alertId: null })
  }
  await ledger.commit({})
  const read = await ledger.readMatches(...DAY, () => true)
  t.equal(read.length, n, 'every line')
  t.equal(new Set(read.map((m) => m.id)).size, n, 'each once')
  const hours = read.map((m) => String(m.eventTime).slice(11, 13))
  t.same(hours, [...hours].sort(), 'by event hour')
  const tenth = read
    .filter((m) => String(m.eventTime).startsWith('2026-11-20T10'))
    .map((m) => Number(String(m.id).slice(1)))
  t.same(
    tenth,
    [...tenth].sort((a, b) => a - b),
    'in commit order within an hour',
  )
})

t.test(
  'the alert book over PostgreSQL: a run whose commit is killed is dropped; a restart counts its records once',
  async (t) => {
    const { url, ledger, reopen } = await pgLedger()
    const rule = ruleMeta({ id: 'R.Book', threshold: 2 })
    const fields = { title: 'a title', dedup: 'u@example.com', severity: 'HIGH', alertContext: { who: 'u' } }
    const at = Date.UTC(2026, 10, 20, 10)
    const update = (offset: number) => ({ logs: { 'Editor.Audit/dt=2026-11-20/hour=10/a.ndjson': offset }, records: 1 })
    const published: string[] = []
    const book = new AlertBook(ledger, {
      alertHook: { created: () => {}, committed: (gs) => published.push(...gs.map((g) => g.id)) },
    })
    // Over PostgreSQL the store decides the groups and serves the alerts (state/pg-alerts.ts).
    const alerts = ledger.alerts
    book.addMatch(storedRecord(0), rule, fields, at)
    book.addMatch(storedRecord(100), rule, fields, at)
    await book.commit(update(200))
    const alert = (await alerts.query({ limit: 1 })).results[0]!
    t.equal(alert.eventCount, 2)
    t.same(await alerts.context(alert), { who: 'u' }, 'its context read back from PostgreSQL')

    const block = await blockCheckpoints(url)
    book.hold()
    book.addMatch(storedRecord(200), rule, fields, at)
    book.addMatch(storedRecord(300), rule, { ...fields, dedup: 'other' }, at)
    book.addMatch(storedRecord(400), rule, { ...fields, dedup: 'other' }, at)
    const failing = book.commit(update(500))
    t.ok(await block.kill(), 'the commit killed between its rows and its checkpoint')
    await t.rejects(failing)
    await block.release()
    book.discardLoop()
    book.release()
    t.equal((await alerts.alert(alert.id))?.eventCount, 2, 'the group is at its durable count')
    t.same(
      (await alerts.query({ limit: 10 })).results.map((g) => g.id),
      [alert.id],
      "the failed run's alert is not there",
    )
    t.same(published, [alert.id], 'only the durable alert was published')

    const reopened = await reopen()
    const again = new AlertBook(reopened, {})
    t.teardown(() => again.close())
    t.same(
      [...again.groups.values()].map((g) => [g.id, g.eventCount, g.status]),
      [[alert.id, 2, 'OPEN']],
      'a restart sees what was durable',
    )
    t.equal(again.checkpoint.logs['Editor.Audit/dt=2026-11-20/hour=10/a.ndjson'], 200)
    again.addMatch(storedRecord(200), rule, fields, at) // evaluated again from the checkpoint
    await again.commit(update(300))
    t.equal((await reopened.alerts?.alert(alert.id))?.eventCount, 3, 'the record counts once')
  },
)
