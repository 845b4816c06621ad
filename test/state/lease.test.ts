// Singletons by lease over one PostgreSQL (src/state/lease.ts, lease-slots.ts): of two holders one
// holds the lease and runs a slot; a holder that stops renewing (killed: its pool ended, nothing
// released) is replaced within one renewal interval after its lease's time to live; a slot is
// neither skipped nor run twice across the handover, and a deposed holder that still believes it
// holds the lease (its renewal not yet due) has its late commit refused by the fence.
import pg from 'pg'
import pino from 'pino'
import t from 'tap'
import { PgLease } from '../../src/state/lease.js'
import { PgSlots } from '../../src/state/lease-slots.js'
import { openPostgres } from '../../src/state/postgres.js'
import { freshDatabase } from '../helpers/postgres.js'
import { waitFor } from '../helpers/wait.js'

const logger = pino({ level: 'silent' })

async function rows(url: string, sql: string, params: unknown[] = []): Promise<any[]> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return (await c.query(sql, params)).rows
  } finally {
    await c.end()
  }
}

/** A replica's lease and slots on a pool of its own. */
async function holder(url: string, replica: string, ttlMs: number) {
  const pool = await openPostgres({ url, max: 2 }, logger)
  const lease = new PgLease(pool, { name: 'schedules', replica, ttlMs }, logger)
  const slots = new PgSlots(pool, lease, 'query:')
  return { pool, lease, slots }
}

const SLOT = (n: number) => Date.parse('2026-11-20T10:00:00Z') + n * 60_000

t.test('one of two holders runs a slot; a killed holder is replaced within one interval', async (t) => {
  const url = await freshDatabase()
  const ttl = 900
  const a = await holder(url, 'a', ttl)
  const b = await holder(url, 'b', ttl)
  t.teardown(async () => {
    await b.lease.stop()
    await b.pool.end()
  })
  await a.lease.start()
  await b.lease.start()
  t.ok(a.slots.leading(), 'the first holder leads')
  t.notOk(b.slots.leading(), 'the second does not')
  t.notOk(await b.slots.begin('q', SLOT(0)), 'a replica not leading does not run a slot')
  t.ok(await a.slots.begin('q', SLOT(0)))
  t.ok(await a.slots.commit('q', SLOT(0)), 'the holder records its run')
  t.notOk(await a.slots.commit('q', SLOT(0)), 'a slot is recorded once')
  // Several renewals later (its expiry moved on by a whole TTL) the lease has not moved.
  const expiry = async () => ((await rows(url, 'SELECT expires_at FROM leases'))[0].expires_at as Date).getTime()
  const first = await expiry()
  await waitFor('renewals over a whole TTL', async () => (await expiry()) >= first + ttl, 5_000, 50)
  t.ok(a.slots.leading())
  t.notOk(b.slots.leading())

  // Killed: it stops renewing and its connections end; nothing is released.
  const fenceA = a.lease.fence()!
  await a.lease.stop(false)
  await a.pool.end()
  const killed = Date.now()
  await waitFor('the other replica to take the lease', () => b.slots.leading(), 5_000, 20)
  const took = Date.now() - killed
  t.ok(took <= ttl + ttl / 3 + 400, `taken over within the TTL and one renewal interval (${took} ms)`)
  t.ok(b.lease.fence()! > fenceA, 'the new holder has a higher fence')
  await b.slots.refresh()
  t.equal(b.slots.lastSlot('q'), SLOT(0), 'the new holder reads the last recorded slot')
  t.notOk(await b.slots.begin('q', SLOT(0)), 'and does not run it again')
  t.ok(await b.slots.begin('q', SLOT(1)), 'it runs the next one')
  t.ok(await b.slots.commit('q', SLOT(1)))
  t.same(
    (
      await rows(
        url,
        "SELECT extract(epoch FROM slot) * 1000 AS slot FROM job_runs WHERE job = 'query:q' ORDER BY slot",
      )
    ).map((r) => Number(r.slot)),
    [SLOT(0), SLOT(1)],
    'each slot recorded once, none skipped',
  )
})

t.test("a deposed holder's late commit is refused; the slot runs once, on the new holder", async (t) => {
  const url = await freshDatabase()
  // A long TTL: the deposed holder's own renewal is not due, so it still believes it holds the lease.
  const a = await holder(url, 'a', 30_000)
  const b = await holder(url, 'b', 600)
  t.teardown(async () => {
    await a.lease.stop(false)
    await b.lease.stop()
    await Promise.all([a.pool.end(), b.pool.end()])
  })
  await a.lease.start()
  await b.lease.start()
  t.ok(await a.slots.begin('q', SLOT(5)), 'the holder starts the slot')
  // Its process stalls past its lease (here: the lease expires under it), and the other takes over.
  await rows(url, "UPDATE leases SET expires_at = now() - interval '1 second'")
  await waitFor('the other replica to take the lease', () => b.slots.leading(), 5_000, 20)
  t.ok(a.slots.leading(), 'the deposed holder still believes it leads')
  await b.slots.refresh()
  t.ok(await b.slots.begin('q', SLOT(5)), 'the slot was not recorded: the new holder runs it')
  t.ok(await b.slots.commit('q', SLOT(5)), 'and records it')
  t.notOk(await a.slots.commit('q', SLOT(5)), "the deposed holder's late commit is refused")
  t.notOk(await a.slots.commit('q', SLOT(6)), 'so is any later slot of it (stale fence)')
  t.same(await rows(url, 'SELECT job, holder FROM job_runs'), [{ job: 'query:q', holder: b.lease.holder }])
})
