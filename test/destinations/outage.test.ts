// quality.md: "a receiver that is down for 10 minutes then recovers gets every alert", on a time
// scale of 1/60: every duration of the default delivery policy is divided by 60 (firstDelayMs 1000 →
// 17, maxDelayMs 600000 → 10000, budgetMinutes 60 → 1, timeoutMs 10000 → 167; attempts stay 10),
// and so is the outage: 10 minutes → 10 s. The receiver refuses connections (it stops listening)
// while alerts are created at its start, middle and end; it then listens again on the same port.
// Every alert is delivered exactly once (one 2xx per Idempotency-Key), none is a dead letter.
// Real port: a remote (the receivers; the service runs in process).
import t from 'tap'
import { type Receiver, startReceiver } from '../helpers/receiver.js'
import { startInProcess } from '../helpers/in-process.js'
import { tempDir } from '../helpers/rulekeeper.js'
import { commandRecord, commandRule, DETECT_ENV, sendAndDetect } from '../detect/helpers.js'

const SCALE = 60
const OUTAGE_MS = (10 * 60_000) / SCALE
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

t.test('a receiver down for 10 minutes (scaled 1/60) then back gets every alert', async (t) => {
  t.setTimeout(120_000)
  const rx: Receiver = await startReceiver()
  t.teardown(() => rx.close())
  const config = {
    destinations: [{ id: 'ops', type: 'webhook', url: rx.url, severities: ['HIGH'] }],
    delivery: {
      attempts: 10,
      firstDelayMs: Math.round(1000 / SCALE),
      maxDelayMs: 600_000 / SCALE,
      budgetMinutes: 60 / SCALE,
      timeoutMs: Math.round(10_000 / SCALE),
    },
  }
  const s = await startInProcess({ dataDir: tempDir('rk-dest-outage-'), env: DETECT_ENV, config })
  t.teardown(() => s.close())
  await commandRule(s, 'Outage.High', 'outage', { severity: 'HIGH', groupBy: '- Key: user_email\n' })

  await rx.down()
  const downAt = Date.now()
  // Alerts at the outage's start, a third, two thirds and just before its end.
  let n = 0
  const created = new Map<string, number>()
  for (const at of [0, OUTAGE_MS / 3, (2 * OUTAGE_MS) / 3, OUTAGE_MS - 500]) {
    await sleep(Math.max(0, downAt + at - Date.now())) // wait: the scaled outage schedule (time is the point)
    const stamp = new Date(Date.UTC(2026, 10, 20, 9, 0, n)).toISOString()
    await sendAndDetect(
      s,
      [0, 1].map(() => commandRecord('outage', 'outage', stamp, { user_email: `u${n++}@x` })),
    )
    const all = (await s.request('GET', '/alerts?rule-id=Outage.High&limit=100')).body.results as any[]
    for (const a of all) if (!created.has(a.id)) created.set(a.id, Date.now())
  }
  t.equal(created.size, 8, 'one alert per record')
  await sleep(Math.max(0, downAt + OUTAGE_MS - Date.now())) // wait: the scaled outage lasts 10 s (time is the point)
  const first = [...created.keys()][0]!
  const during = (await s.request('GET', `/alerts/${first}`)).body.destinations[0]
  t.equal(during.state, 'pending', 'still pending at the end of the outage (not a dead letter)')
  t.ok(during.attempts >= 5, `retried during the outage (${during.attempts} attempts)`)
  t.equal(during.lastError, 'connection failed: ECONNREFUSED')
  t.equal(rx.got.length, 0, 'nothing reached the receiver while it was down')
  await rx.up()
  const upAt = Date.now()

  await rx.until(() => rx.acked().size === created.size, 'every alert acknowledged', 60_000)
  for (const id of created.keys()) t.equal(rx.acked().get(id), 1, `${id.slice(0, 8)} acknowledged once`)
  t.ok(
    rx.got.every((r) => JSON.parse(r.body).id === r.key),
    'each request carries its alert with Idempotency-Key = alert id',
  )
  const lastAt = Math.max(...rx.got.map((r) => r.at))
  t.comment(
    `outage ${OUTAGE_MS} ms; every alert delivered ${lastAt - upAt} ms after the receiver came back ` +
      `(${(((lastAt - upAt) * SCALE) / 60_000).toFixed(1)} min at full scale)`,
  )
  // The receiver answers before the server journals the outcome: give the journal a bounded moment.
  for (const id of created.keys()) {
    let state: string | undefined
    for (let i = 0; i < 50; i++) {
      state = (await s.request('GET', `/alerts/${id}`)).body.destinations[0].state
      if (state !== 'pending') break
      await sleep(100) // wait: poll interval of a wait on a condition
    }
    t.equal(state, 'delivered', 'delivered on the alert')
  }
  t.same((await s.request('GET', '/status')).body.delivery.failed, [], 'no dead letter')
})
