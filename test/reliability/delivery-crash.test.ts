// Delivery under SIGKILL (quality.md "Detection and delivery under faults", alerts.md §4's durable
// outbox): a child server ingests records that each create an alert routed to a real receiver on
// 127.0.0.1, while that receiver fails (503), hangs (until the server's timeout) or drops the
// connection on most requests, so deliveries are pending in the outbox when the server is SIGKILLed
// at a seeded random moment, 30 times (quality.md: ≥ 30; RULEKEEPER_DELIVERY_KILLS; the seed:
// RULEKEEPER_SEED). Each restart is on the same data directory. Then the receiver recovers and a last start delivers:
// every alert the acknowledged records cause exists and reached the receiver at least once; every
// request's Idempotency-Key is its body's alert id (so a key is the same across restarts: alerts
// tried before a kill and again after it are counted); a delivery acknowledged and journaled is
// not sent again after a restart (repeats are bounded by what a kill can cut between a 2xx and its
// journal line: at most the lane's concurrency per kill); nothing is left pending or failed.
// Real port: a crash (SIGKILL of a child server) and a remote (the receiver).
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { alertId } from '../../src/detect/grouping.js'
import { makeRecord, TOKEN as SOURCE_TOKEN } from '../ingest/helpers.js'
import { CrashServer, IngestLoad } from '../helpers/crash-harness.js'
import { startReceiver } from '../helpers/receiver.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'
import { SeededRandom } from '../helpers/seeded-random.js'

const KILLS = Math.max(1, Number(process.env.RULEKEEPER_DELIVERY_KILLS ?? 30))
const SEED = Number(process.env.RULEKEEPER_SEED ?? 1717)
const CONCURRENCY = 4
const BATCH = 5
const API_TOKEN = 'rk-delivery-crash-bootstrap-token-0123456789'
const RULE = 'Crash.Deliver'
const BASE = Date.parse('2026-11-20T07:00:00Z')
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Record n: its own user (so its own alert), event time n seconds after BASE. */
const email = (n: number) => `u${n}@example.com`
function record(n: number) {
  const r = makeRecord(`dl-${n}`, new Date(BASE + n * 1000).toISOString(), { user_email: email(n) }) as Record<
    string,
    unknown
  >
  delete r.login
  r.team_command = { action: 'create', command_id: 'c1', command_name: 'deliver', is_active: true }
  return r
}

t.test(`deliveries survive ${KILLS} SIGKILLs with a failing receiver`, async (t) => {
  t.setTimeout(900_000)
  t.comment(`seed ${SEED}`)
  const rand = new SeededRandom(SEED)
  const started = Date.now()
  const dataDir = tempDir('rk-delivery-crash-')

  // The receiver: while `failing`, a seeded mix of 503, hang, dropped connection and (rarely) 200.
  let failing = true
  let generation = 0
  const genOf = new Map<object, number>()
  const rx = await startReceiver((r) => {
    genOf.set(r, generation)
    if (!failing) return { status: 200 }
    const x = rand.next()
    return x < 0.4 ? { status: 503 } : x < 0.6 ? 'hang' : x < 0.8 ? 'drop' : { status: 200 }
  })
  t.teardown(() => rx.close())

  const configFile = path.join(tempDir('rk-delivery-crash-config-'), 'config.json')
  writeFileSync(
    configFile,
    JSON.stringify({
      destinations: [{ id: 'rx', type: 'webhook', url: rx.url, severities: [] }],
      delivery: {
        attempts: 1000,
        firstDelayMs: 20,
        maxDelayMs: 400,
        budgetMinutes: 60,
        timeoutMs: 300,
        concurrency: CONCURRENCY,
      },
      // Every record is its own alert of one rule (up to ~5,500): the alert limit (1,000 per rule and
      // hour by default) is not what this test is about.
      detection: { alertsPerRuleHour: 1_000_000 },
    }),
  )
  const env = {
    RULEKEEPER_BOOTSTRAP_TOKEN: API_TOKEN,
    RULEKEEPER_EDITOR_AUDIT_TOKEN: SOURCE_TOKEN,
    RULEKEEPER_CONFIG: configFile,
  }
  const server = new CrashServer(t, dataDir, env, API_TOKEN)
  const created = await server.createRule({
    ...SAMPLE_BODIES.simple(RULE, {
      logTypes: ['Editor.Audit'],
      detection: '- KeyPath: team_command.command_name\n  Condition: Equals\n  Value: deliver\n',
      tests: [],
    }),
    severity: 'HIGH',
    outputIDs: ['rx'],
    groupBy: '- Key: user_email\n',
  })
  t.equal(created.status, 200, JSON.stringify(created.body))

  // One sender, a batch every 30 ms. Let some requests reach the receiver in each life (new alerts
  // or the outbox of earlier ones), then kill somewhere in the next 1.5 s of ingest, detection
  // commits and delivery attempts.
  const load = new IngestLoad(record, BATCH, 30)
  const { acked } = load
  await server.killRounds({
    kills: KILLS,
    load,
    senders: 1,
    progress: () => rx.got.length,
    killDelayMs: () => rand.int(1500),
    onRound: (round) => {
      generation = round
    },
  })

  // The receiver recovers; a last start sends the rest (and takes the sender's retried batches).
  failing = false
  generation = KILLS
  const child = await server.start()
  for (const status of await load.resend(child.url)) t.equal(status, 200)
  await server.detectionCaughtUp()
  const listed = await server.alerts(RULE)

  // No alert lost: one per acknowledged record, with the id the grouping gives it.
  const expected = new Set([...acked].map((n) => alertId(RULE, JSON.stringify([email(n)]), BASE + n * 1000)))
  t.ok(expected.size >= KILLS * BATCH, `${expected.size} alerts expected`)
  t.same(
    listed.map((a) => a.id).filter((id) => !expected.has(id)),
    [],
    'no alert the records do not cause',
  )
  t.equal(listed.length, expected.size, 'every expected alert exists, once')

  // Every alert acknowledged, however many the machine's speed let the load make (1,100 to 5,500
  // seen): the wait fails when the receiver gets no new alert for 30 s (a stall), not at a fixed time.
  const recoveredAt = Date.now()
  let seen = -1
  let progressAt = Date.now()
  for (;;) {
    const acked = rx.acked()
    const done = [...expected].filter((id) => acked.has(id)).length
    if (done === expected.size) break
    if (done > seen) {
      seen = done
      progressAt = Date.now()
    }
    if (Date.now() - progressAt > 30_000 || Date.now() - recoveredAt > 600_000) break
    await sleep(250) // wait: poll interval of a wait on a condition
  }
  t.comment(`${expected.size} alerts acknowledged ${Date.now() - recoveredAt} ms after the receiver recovered`)
  const lateOnes = [...expected].filter((id) => !rx.acked().has(id))
  t.same(lateOnes, [], 'every alert reached the receiver (2xx) at least once')
  t.same(
    rx.got.filter((r) => JSON.parse(r.body).id !== r.key).map((r) => r.key),
    [],
    'every request: Idempotency-Key = the alert id in its body',
  )
  t.same(
    rx.got.filter((r) => !expected.has(r.key)).map((r) => r.key),
    [],
    'no request for an alert that does not exist',
  )
  // Keys tried in more than one server life: the outbox carried them over a kill with their key.
  const lives = new Map<string, Set<number>>()
  for (const r of rx.got) {
    const s = lives.get(r.key) ?? new Set<number>()
    s.add(genOf.get(r) ?? -1)
    lives.set(r.key, s)
  }
  const across = [...lives.values()].filter((s) => s.size > 1).length
  t.ok(across > 0, `${across} alerts were tried before a kill and again after it, with the same key`)
  const repeats = [...rx.acked().values()].reduce((sum, n) => sum + n - 1, 0)
  t.ok(
    repeats <= KILLS * CONCURRENCY,
    `acknowledged deliveries are not sent again after a restart (${repeats} repeats ≤ ${KILLS} kills × ${CONCURRENCY})`,
  )

  // The server's own view agrees: every delivery delivered, nothing failed.
  for (let waited = 0; ; waited += 100) {
    const st = await server.api('GET', '/status')
    const alerts = await server.alerts(RULE)
    const notDelivered = alerts.filter((a) => a.destinations.length !== 1 || a.destinations[0].state !== 'delivered')
    if (notDelivered.length === 0 && st.body.delivery.failed.length === 0) break
    if (waited > 30_000) {
      t.same(
        notDelivered.slice(0, 3).map((a) => a.destinations),
        [],
        'every alert shows its delivery as delivered',
      )
      t.same(st.body.delivery.failed, [], 'no dead letter')
      break
    }
    await sleep(100) // wait: poll interval of a wait on a condition
  }
  t.equal(await child.stop(), 0, 'a clean stop')
  t.comment(
    `${acked.size} records, ${expected.size} alerts, ${rx.got.length} requests (${
      rx.got.filter((r) => r.answered === 'hang').length
    } hung, ${rx.got.filter((r) => r.answered === 'drop').length} dropped), ${across} across a kill, ` +
      `${repeats} repeats, ${KILLS} kills, ${((Date.now() - started) / 1000).toFixed(1)} s`,
  )
})
