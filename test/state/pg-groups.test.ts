// The alert book over the PostgreSQL store, which decides groups in the commit (state/pg-groups.ts):
// two books on two ledgers (two replicas, one database) whose matches of one dedup string are
// committed in turn, and at the same moment, make one group and one alert, heard by the alert hook
// of the one commit that crossed the threshold, inside that commit (`created`) and once it is
// durable (`committed`); each match line names the group the store chose; a commit whose connection
// dies (pg_terminate_backend between its rows and its checkpoint) changes nothing and publishes
// nothing, and a status change it held back applies after it. The commit that makes an alert
// inserts its routed deliveries in the shared outbox (pending), so no replica's death between the
// commit and its outbox loses them.
import pg from 'pg'
import pino from 'pino'
import t from 'tap'
import { AlertBook } from '../../src/detect/alert-book.js'
import type { RuleMeta } from '../../src/detect/grouping.js'
import { PgLedger } from '../../src/state/pg-ledger.js'
import { pgLedger, pgRows } from '../detect/ledgers.js'
import { ruleMeta, storedRecord } from '../detect/rule-meta.js'
import { waitFor } from '../helpers/wait.js'

const logger = pino({ level: 'silent' })
const rule: RuleMeta = ruleMeta({ id: 'R.Groups', threshold: 2 })
const fields = (dedup: string) => ({ title: 'a title', dedup, severity: 'HIGH', alertContext: { dedup } })
const NOW = Date.UTC(2026, 10, 20, 10)

/** The outbox's rows: alert, destination, state. */
async function deliveries(url: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    const { rows } = await c.query('SELECT alert_id, destination_id, state FROM deliveries')
    return rows.map((r) => `${r.alert_id} ${r.destination_id} ${r.state}`)
  } finally {
    await c.end()
  }
}

/** A book on its own ledger (a replica), with what its alert hook heard. */
async function replica(url: string, name: string) {
  const ledger = await PgLedger.connect({ url, replica: name }, logger)
  const heard = { created: [] as string[], committed: [] as string[] }
  const book = new AlertBook(ledger, {
    alertHook: {
      created: (g) => {
        heard.created.push(g.id)
        // As the destinations' hook routes it: one destination.
        g.destinations = [{ id: 'hook', state: 'pending', attempts: 0, lastError: null }]
      },
      committed: (gs) => heard.committed.push(...gs.map((g) => g.id)),
    },
  })
  return { ledger, book, heard }
}

t.test('two replicas: one group, one alert, heard once, by the commit that crossed the threshold', async (t) => {
  const { url, ledger: first } = await pgLedger()
  await first.close()
  const a = await replica(url, 'replica-a')
  const b = await replica(url, 'replica-b')
  t.teardown(() => Promise.all([a.book.close(), b.book.close()]))

  a.book.addMatch(storedRecord(0), rule, fields('u1'), NOW)
  await a.book.commit({ records: 1 })
  t.same(a.heard, { created: [], committed: [] }, 'one match of two: no alert')
  b.book.addMatch({ ...storedRecord(100), file: 'other/b.ndjson' }, rule, fields('u1'), NOW)
  t.same(b.heard.created, [], 'not before the commit: the store decides')
  await b.book.commit({ records: 1 })
  t.equal(b.heard.created.length, 1, "b's commit made the alert (its hook heard it inside the commit)")
  t.same(b.heard.committed, b.heard.created, 'and once it was durable')
  t.same(a.heard.created, [], 'a heard nothing')
  const id = b.heard.created[0]!
  const alerts = a.ledger.alerts
  const seen = await alerts.alert(id)
  t.same([seen?.eventCount, seen?.windowStart], [2, '2026-11-20T10:00:00.000Z'], 'read through a: both matches')
  t.same(await alerts.context(seen!), { dedup: 'u1' }, 'the first match’s context')
  t.same(
    (await alerts.eventLocations(seen!)).map((l) => l.offset),
    [0, 100],
    'both match lines name the group the store chose',
  )

  // Commits of both replicas at the same moment, 5 matches each of a new dedup string (threshold 2).
  for (let i = 0; i < 5; i++) {
    a.book.addMatch(storedRecord(1000 + i), rule, fields('race'), NOW)
    b.book.addMatch({ ...storedRecord(2000 + i), file: 'other/b.ndjson' }, rule, fields('race'), NOW)
  }
  await Promise.all([a.book.commit({ records: 5 }), b.book.commit({ records: 5 })])
  const raced = [...a.heard.created, ...b.heard.created].filter((x) => x !== id)
  t.equal(raced.length, 1, 'one alert made, by one of the two commits')
  t.same(
    [...a.heard.committed, ...b.heard.committed].filter((x) => x !== id),
    raced,
    'committed once',
  )
  t.equal((await alerts.alert(raced[0]!))?.eventCount, 10, 'counting both commits')
  const page = await alerts.query({ limit: 10 })
  t.same(page.results.map((g) => g.eventCount).sort(), [10, 2], 'two alerts in all')
  // No outbox was ever told of them (as if both replicas died at once after their commits).
  t.same(
    (await deliveries(url)).sort(),
    [`${id} hook pending`, `${raced[0]} hook pending`].sort(),
    "each alert's delivery queued by the commit that made it",
  )

  // A status set through one replica is read through the other.
  t.equal((await b.ledger.alerts.setStatus(id, 'CLOSED'))?.status, 'CLOSED')
  t.equal((await alerts.alert(id))?.status, 'CLOSED')
  t.same(
    (await alerts.query({ statuses: ['OPEN'], limit: 10 })).results.map((g) => g.id),
    raced,
    'the list filters by it',
  )
  // Another match after the status change: counted, the status kept.
  a.book.addMatch(storedRecord(300), rule, fields('u1'), NOW)
  await a.book.commit({ records: 1 })
  t.same([(await alerts.alert(id))?.eventCount, (await alerts.alert(id))?.status], [3, 'CLOSED'])
})

t.test('a commit whose connection dies changes nothing and publishes nothing', async (t) => {
  const { url, ledger: first } = await pgLedger()
  await first.close()
  const a = await replica(url, 'replica-a')
  const b = await replica(url, 'replica-b')
  t.teardown(() => Promise.all([a.book.close(), b.book.close()]))
  a.book.addMatch(storedRecord(0), rule, fields('u1'), NOW)
  b.book.addMatch(storedRecord(10), rule, fields('held'), NOW)
  b.book.addMatch(storedRecord(20), rule, fields('held'), NOW)
  await Promise.all([a.book.commit({ records: 1 }), b.book.commit({ records: 2 })])
  const held = b.heard.committed[0]!
  const before = await pgRows(url)

  // The checkpoint table locked: the commit writes its groups and lines, then waits; it is killed there.
  const blocker = new pg.Client({ connectionString: url })
  await blocker.connect()
  t.teardown(() => blocker.end())
  await blocker.query('BEGIN')
  await blocker.query('LOCK TABLE detection_checkpoints IN EXCLUSIVE MODE')
  a.book.addMatch(storedRecord(100), rule, fields('u1'), NOW)
  a.book.addMatch(storedRecord(110), rule, fields('held'), NOW)
  const failing = a.book.commit({ records: 1 })
  // A status change of an alert the dying commit holds waits for it, then applies.
  const status = b.ledger.alerts.setStatus(held, 'RESOLVED')
  const pid = await waitFor('the commit to wait at its checkpoint', async () => {
    const { rows } = await blocker.query(
      "SELECT pid FROM pg_locks WHERE NOT granted AND relation = 'detection_checkpoints'::regclass",
    )
    return rows[0]?.pid as number | undefined
  })
  t.ok((await blocker.query('SELECT pg_terminate_backend($1) AS ok', [pid])).rows[0].ok)
  await t.rejects(failing, 'the commit fails')
  await blocker.query('ROLLBACK')
  t.same((await status)?.status, 'RESOLVED')
  const heldNow = await a.ledger.alerts.alert(held)
  t.same([heldNow?.eventCount, heldNow?.status], [2, 'RESOLVED'], 'the status kept, the dead commit’s count not')
  t.same(await pgRows(url), before, 'nothing of it in the database')
  t.same(a.heard.committed, [], 'no alert published')

  // b's match is the second of the group: it makes the alert (a's killed count was not kept).
  b.book.addMatch({ ...storedRecord(200), file: 'other/b.ndjson' }, rule, fields('u1'), NOW)
  await b.book.commit({ records: 1 })
  const made = b.heard.committed.filter((x) => x !== held)
  t.equal(made.length, 1, 'the alert made by the next commit that crossed the threshold')
  t.equal((await b.ledger.alerts.alert(made[0]!))?.eventCount, 2)
})
