// The delivery outbox in PostgreSQL (src/state/pg-outbox.ts): two dispatchers (replicas) over one
// database, each with its own pool, deliver each alert once to a real local HTTP receiver with its
// idempotency key, whichever replica queued it; a claim abandoned by a killed dispatcher (its pool
// ended mid-request, nothing written or given back) is delivered by the other once the claim's
// time runs out; a failed delivery retried with the file store's backoff, and redelivered on request.
// Real port: a remote (the receiver the deliveries go to).
import pg from 'pg'
import pino from 'pino'
import t from 'tap'
import { parseDestinationConfig } from '../../src/destinations/config.js'
import type { DeliveryEntry } from '../../src/destinations/outbox.js'
import { createDestinationMetrics } from '../../src/destinations/metrics.js'
import { createMetricsRegistry } from '../../src/metrics.js'
import { PgOutbox } from '../../src/state/pg-outbox.js'
import { openPostgres } from '../../src/state/postgres.js'
import { freshDatabase } from '../helpers/postgres.js'
import { startReceiver } from '../helpers/receiver.js'
import { waitFor } from '../helpers/wait.js'

const logger = pino({ level: 'silent' })

async function replica(url: string, name: string, rxUrl: string, o: { claimMs?: number; attempts?: number } = {}) {
  const { destinations, delivery } = parseDestinationConfig(
    {
      destinations: [{ id: 'hook', type: 'webhook', url: rxUrl }],
      delivery: { timeoutMs: 5_000, firstDelayMs: 50, maxDelayMs: 200, attempts: o.attempts ?? 10 },
    },
    {},
  )
  const db = await openPostgres({ url, max: 3 }, logger)
  const outbox = new PgOutbox({
    db,
    replica: name,
    destinations,
    policy: delivery,
    // Every replica can show every alert (the store's alerts): its id and the replica that sent it.
    alertView: async (id) => ({ id, sentBy: name }),
    logger,
    metrics: createDestinationMetrics(createMetricsRegistry(false), () => new Map()),
    pollMs: 50,
    claimMs: o.claimMs,
  })
  return { db, outbox }
}

const entry = (): DeliveryEntry => ({ id: 'hook', state: 'pending', attempts: 0, lastError: null })

t.test('two dispatchers over one database deliver each alert once, with its idempotency key', async (t) => {
  const url = await freshDatabase()
  const rx = await startReceiver()
  t.teardown(() => rx.close())
  const a = await replica(url, 'a', rx.url)
  const b = await replica(url, 'b', rx.url)
  t.teardown(async () => {
    await Promise.all([a.outbox.close(), b.outbox.close()])
    await Promise.all([a.db.end(), b.db.end()])
  })
  const ids = Array.from({ length: 60 }, (_, i) => `alert-${i}`)
  const now = Date.now()
  // Each alert queued by one replica, some by both (found again at a start): one row each.
  const entries = new Map<string, DeliveryEntry>()
  ids.forEach((id, i) => {
    const e = entry()
    entries.set(id, e)
    if (i % 3 !== 1) a.outbox.add(id, e, now, now)
    if (i % 3 !== 0) b.outbox.add(id, entry(), now, now)
  })
  await rx.until(() => rx.acked().size === ids.length, 'every alert delivered')
  await waitFor('every delivery recorded', async () => {
    const { rows } = await a.db.query("SELECT count(*)::int AS n FROM deliveries WHERE state = 'delivered'")
    return rows[0].n === ids.length
  })
  t.same([...rx.acked().keys()].sort(), [...ids].sort(), 'each alert with its id as idempotency key')
  t.same([...new Set(rx.got.map((r) => r.key))].length, rx.got.length, 'no alert sent twice')
  const senders = new Set(rx.got.map((r) => (JSON.parse(r.body) as { sentBy?: string }).sentBy))
  t.same([...senders].sort(), ['a', 'b'], 'both replicas delivered some')
  // The entries (what the alert shows) of the deliveries a replica made are updated in place.
  const byA = rx.got.filter((r) => (JSON.parse(r.body) as { sentBy: string }).sentBy === 'a').map((r) => r.key)
  const shown = (id: string) => entries.get(id)?.state === 'delivered' && entries.get(id)?.attempts === 1
  t.ok(byA.filter((id) => Number(id.slice(6)) % 3 !== 1).every(shown), 'the entries of its deliveries show them')
})

t.test('a claim abandoned by a killed dispatcher is delivered by the other', async (t) => {
  const url = await freshDatabase()
  // The first request hangs (the dispatcher is killed while waiting); the others are answered.
  const rx = await startReceiver((_r, n) => (n === 0 ? 'hang' : { status: 200 }))
  t.teardown(() => rx.close())
  const claimMs = 800
  const a = await replica(url, 'a', rx.url, { claimMs })
  a.outbox.add('alert-x', entry(), Date.now(), Date.now())
  await rx.until(() => rx.got.length === 1, 'the first replica to send')
  // Killed: its pool ends, nothing written, its claim not given back.
  await a.db.end()
  // The row as the dead replica left it, read before the other starts (no one else can claim it).
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  const { rows } = await c
    .query('SELECT claimed_by, extract(epoch FROM claimed_until) * 1000 AS until_ms FROM deliveries')
    .finally(() => c.end())
  t.equal(rows[0].claimed_by, a.outbox.claimer, 'the claim is still the dead replica’s')
  const claimedUntil = Number(rows[0].until_ms)
  const b = await replica(url, 'b', rx.url, { claimMs })
  t.teardown(async () => {
    await b.outbox.close()
    await b.db.end()
    await a.outbox.close()
  })
  await rx.until(() => rx.acked().get('alert-x') === 1, 'the other replica to deliver it')
  // The receiver's time of the redelivery against the claim's end as PostgreSQL recorded it (one
  // machine, one clock; Date.now() is whole milliseconds, hence the floor).
  const at = rx.got[1]!.at
  t.ok(at >= Math.floor(claimedUntil), `not before the claim ran out (${(at - claimedUntil).toFixed(1)} ms after it)`)
  t.equal(rx.got[1]?.key, 'alert-x', 'the same idempotency key')
  t.equal((JSON.parse(rx.got[1]!.body) as { sentBy: string }).sentBy, 'b')
  await waitFor('the delivery recorded', async () => {
    const r = await b.db.query('SELECT state, attempts, claimed_by FROM deliveries')
    return r.rows[0].state === 'delivered' ? r.rows[0] : undefined
  }).then((row) => t.same(row, { state: 'delivered', attempts: 1, claimed_by: null }))
})

t.test('a failing receiver: retried with backoff, then failed; redelivered on request', async (t) => {
  const url = await freshDatabase()
  let up = false
  const rx = await startReceiver(() => (up ? { status: 200 } : { status: 503 }))
  t.teardown(() => rx.close())
  const a = await replica(url, 'a', rx.url, { attempts: 3 })
  t.teardown(async () => {
    await a.outbox.close()
    await a.db.end()
  })
  const e = entry()
  a.outbox.add('alert-f', e, Date.now(), Date.now())
  await waitFor('the delivery to fail', () => e.state === 'failed' || undefined)
  t.equal(rx.got.length, 3, 'three attempts (the policy)')
  t.same(
    rx.got.map((r) => r.attempt),
    ['1', '2', '3'],
  )
  t.same(e, { id: 'hook', state: 'failed', attempts: 3, lastError: 'HTTP 503 Service Unavailable' })
  await waitFor('the dead letter counted', () => a.outbox.failed().length === 1 || undefined)
  t.same(a.outbox.failed(), [
    { alertId: 'alert-f', destinationId: 'hook', attempts: 3, lastError: 'HTTP 503 Service Unavailable' },
  ])
  up = true
  t.equal(await a.outbox.redeliver('alert-f'), 1)
  t.equal(await a.outbox.redeliver('alert-f'), 0, 'a pending delivery is not redelivered')
  await rx.until(() => rx.acked().get('alert-f') === 1, 'the redelivery')
  await waitFor('delivered', () => e.state === 'delivered' || undefined)
})
