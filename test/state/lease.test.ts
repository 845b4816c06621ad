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
  // The handovers as the database saw them (a test-only trigger): the expiry of the lease taken
  // over, and when the take ran, both by the database's clock.
  await rows(
    url,
    `CREATE TABLE handovers (old_expires_at timestamptz, taken_at timestamptz, new_expires_at timestamptz);
     CREATE FUNCTION log_handover() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       INSERT INTO handovers VALUES (OLD.expires_at, now(), NEW.expires_at);
       RETURN NULL;
     END $$;
     CREATE TRIGGER handover AFTER UPDATE ON leases FOR EACH ROW
       WHEN (OLD.fence IS DISTINCT FROM NEW.fence) EXECUTE FUNCTION log_handover();`,
  )
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
  await waitFor('the other replica to take the lease', () => b.slots.leading(), 5_000, 20)
  // By the database's clock, so neither the test's polling nor query latency counts: the take ran
  // after the lease expired and within one renewal interval (a third of the TTL) of it, plus a
  // little for the renewal timer's lag.
  const [handover, ...more] = (
    await rows(
      url,
      `SELECT extract(epoch FROM taken_at - old_expires_at) * 1000 AS late_ms,
              extract(epoch FROM new_expires_at - taken_at) * 1000 AS ttl_ms FROM handovers`,
    )
  ).map((r) => ({ late: Number(r.late_ms), ttl: Number(r.ttl_ms) }))
  t.equal(more.length, 0, 'the lease changed hands once')
  t.equal(handover?.ttl, ttl, "the new holder's take")
  const late = handover!.late
  t.ok(late >= 0 && late <= ttl / 3 + 200, `taken over within one renewal interval of its expiry (${late} ms after)`)
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
