// Replicas over one PostgreSQL never split an alert group (state/pg-groups.ts): three services in
// process (their own data directories, Git repositories and `state.replica`, one database) each get
// some of the records of one dedup string, interleaved: one alert with the summed count, made when
// the sum crossed the threshold (whichever replica's record did), delivered once; a group's window
// closing on one replica and a new one opening on another; triage set through one replica and read
// through the others (state/pg-alerts.ts).
// Real port: a remote (the webhook receiver; the services run in process).
import fs from 'node:fs'
import t from 'tap'
import { commandRecord, commandRule, DETECT_ENV, sendAndDetect } from '../detect/helpers.js'
import { type InProcessServer, startInProcess } from '../helpers/in-process.js'
import { freshDatabase } from '../helpers/postgres.js'
import { startReceiver } from '../helpers/receiver.js'
import { tempDir } from '../helpers/rulekeeper.js'
import { waitFor } from '../helpers/wait.js'

type Alert = {
  id: string
  eventCount: number
  status: string
  firstEventTime: string
  assignee: string | null
  createdAt: string
}

const alertsOf = async (s: InProcessServer, ruleId: string) => {
  const res = await s.request('GET', `/alerts?rule-id=${encodeURIComponent(ruleId)}&limit=100`)
  if (res.status !== 200) throw new Error(`GET /alerts: ${res.status} ${res.text}`)
  return res.body.results as Alert[]
}
const alertsCreated = async (s: InProcessServer) =>
  Number(/^rulekeeper_detection_alerts_total (\d+)/m.exec((await s.send('GET', '/metrics')).text)?.[1] ?? 0)

t.test('three replicas on one database: one group, one alert, one delivery', async (t) => {
  const url = await freshDatabase()
  const rx = await startReceiver()
  t.teardown(() => rx.close())
  const replicas: InProcessServer[] = []
  t.teardown(async () => {
    for (const s of replicas) await s.close()
  })
  for (const name of ['rk-a', 'rk-b', 'rk-c']) {
    const dataDir = tempDir(`rk-pg-groups-${name}-`)
    t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }))
    const s = await startInProcess({
      dataDir,
      env: DETECT_ENV,
      config: {
        state: { postgres: { url }, replica: name },
        destinations: [{ id: 'rx', type: 'webhook', url: rx.url, severities: ['HIGH'] }],
      },
    })
    replicas.push(s)
    // The same rules on every replica (as one Git remote would give them).
    await commandRule(s, 'PG.Split', 'pgsplit', { threshold: 3 })
    await commandRule(s, 'PG.Window', 'pgwin', { threshold: 1, dedupPeriodMinutes: 15 })
  }
  const [a, b, c] = replicas as [InProcessServer, InProcessServer, InProcessServer]

  // Threshold 3: one record on a, one on b: no alert anywhere (the sum is 2).
  await sendAndDetect(a, [commandRecord('pa', 'pgsplit', '2026-11-20T10:00:00Z')])
  await sendAndDetect(b, [commandRecord('pb', 'pgsplit', '2026-11-20T10:01:00Z')])
  for (const s of replicas) t.same(await alertsOf(s, 'PG.Split'), [], 'no alert below the threshold')
  // The third record, on c, crosses it: one alert, counting all three, served by every replica.
  await sendAndDetect(c, [commandRecord('pc', 'pgsplit', '2026-11-20T10:02:00Z')])
  const [alert, ...more] = await alertsOf(a, 'PG.Split')
  t.same(more, [], 'one alert')
  t.equal(alert?.eventCount, 3, 'the count of every replica’s records')
  // More records on a and b join it.
  await sendAndDetect(a, [commandRecord('pa', 'pgsplit', '2026-11-20T10:03:00Z')])
  await sendAndDetect(b, [commandRecord('pb', 'pgsplit', '2026-11-20T10:04:00Z')])
  for (const s of replicas) {
    const seen = await alertsOf(s, 'PG.Split')
    t.same(
      seen.map((x) => [x.id, x.eventCount, x.firstEventTime]),
      [[alert!.id, 5, '2026-11-20T10:00:00.000Z']],
      'every replica serves the one alert with the summed count',
    )
  }

  // One delivery: the replica whose commit crossed the threshold hands it over, no other.
  await rx.until(() => rx.got.length >= 1, 'the alert delivered')
  let created = 0
  for (const s of replicas) created += await alertsCreated(s)
  t.equal(created, 1, 'the alert was created by one commit of one replica')
  // None other so far; that none comes later is checked at the end (three deliveries, three keys),
  // seconds and several outbox polls of every replica after this one.
  t.equal(rx.got.length, 1, 'one delivery so far')
  // Rule health counts the alert on every replica (the store's alerts, not a replica's memory).
  for (const s of replicas) {
    const health = (await s.request('GET', '/rule-health?rule-id=PG.Split')).body.results[0]
    t.match(health, { ruleId: 'PG.Split', lastAlertAt: alert!.createdAt, alertsLast24h: 1 }, 'rule health')
  }
  // Its delivery's outcome, as the outbox recorded it, is read on every replica.
  for (const s of replicas) {
    const dests = await waitFor('the outcome recorded', async () => {
      const d = (await s.request('GET', `/alerts/${alert!.id}`)).body.destinations as Array<{ state: string }>
      return d.length > 0 && d.every((x) => x.state === 'delivered') && d
    })
    t.match(dests, [{ state: 'delivered', attempts: 1, lastError: null }], 'the delivery outcome')
    // A retry is asked of any replica (nothing failed: nothing is sent again).
    const retried = await s.request('POST', `/alerts/${alert!.id}/deliveries/retry`)
    t.equal(retried.status, 202, retried.text)
    t.equal(retried.body.id, alert!.id)
  }

  // A window closing on one replica and the next opening on another (15 minutes, from the first event).
  await sendAndDetect(a, [commandRecord('pa', 'pgwin', '2026-11-20T11:00:00Z')])
  await sendAndDetect(b, [commandRecord('pb', 'pgwin', '2026-11-20T11:10:00Z')]) // joins a's window
  await sendAndDetect(c, [commandRecord('pc', 'pgwin', '2026-11-20T11:16:00Z')]) // past it: a new one
  await sendAndDetect(a, [commandRecord('pa', 'pgwin', '2026-11-20T11:20:00Z')]) // joins c's window
  const windows = (await alertsOf(c, 'PG.Window')).map((x) => [x.firstEventTime, x.eventCount]).sort()
  t.same(
    windows,
    [
      ['2026-11-20T11:00:00.000Z', 2],
      ['2026-11-20T11:16:00.000Z', 2],
    ],
    'two windows, each counting records of two replicas',
  )

  // Triage through one replica, read through the others.
  const patched = await a.request('PATCH', `/alerts/${alert!.id}`, { status: 'TRIAGED', assignee: 'ana' })
  t.equal(patched.status, 200)
  const onB = await b.request('GET', `/alerts/${alert!.id}`)
  t.same([onB.body.status, onB.body.assignee], ['TRIAGED', 'ana'], 'the status set on a is read on b')
  t.equal((await c.request('POST', `/alerts/${alert!.id}/comments`, { text: 'seen on c' })).status, 201)
  const onA = await a.request('GET', `/alerts/${alert!.id}`)
  t.same(
    onA.body.history.map((h: { field: string }) => h.field),
    ['status', 'assignee', 'comment'],
    'one history, whichever replica changed it',
  )
  t.same(
    (await b.request('GET', `/alerts?rule-id=PG.Split&status=TRIAGED`)).body.results.map((x: Alert) => x.id),
    [alert!.id],
    'the list filters by the shared status',
  )
  // A record after the triage: the count goes on, the status stays.
  await sendAndDetect(c, [commandRecord('pc', 'pgsplit', '2026-11-20T10:05:00Z')])
  const after = await a.request('GET', `/alerts/${alert!.id}`)
  t.same([after.body.eventCount, after.body.status, after.body.comments.length], [6, 'TRIAGED', 1])
  // Each alert delivered once: the split group's and the two windows' (threshold 1).
  await rx.until(() => rx.got.length >= 3, 'the windows delivered')
  await a.request('GET', '/alerts')
  t.equal(rx.got.length, 3, 'three deliveries')
  t.equal(new Set(rx.got.map((r) => r.key)).size, 3, 'of three alerts (one idempotency key each)')
})
