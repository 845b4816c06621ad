// Deliveries from a real server to real receivers on 127.0.0.1: severity routing with a hanging
// destination beside (the others and detection unaffected), OutputIds, a receiver failing then
// recovering (every alert acknowledged once per key), 4xx failing at once, a receiver down past
// the budget (dead letter on the alert, /status, /metrics; then redelivery by the API and by the
// CLI's request file), and deliveries pending across a restart (same key after it).
// Real port: a remote (the receivers; the service runs in process).
import { createHmac } from 'node:crypto'
import t from 'tap'
import { main } from '../../src/cli/index.js'
import { makeRecord, ndjson, TOKEN } from '../ingest/helpers.js'
import { postLog } from '../detect/helpers.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'

let seq = 0
const cmd = (name: string, extra: Record<string, unknown> = {}) => {
  const r = makeRecord(
    `d-${name}-${seq++}`,
    new Date(Date.UTC(2026, 10, 20, 8, 0, seq)).toISOString(),
    extra,
  ) as Record<string, unknown>
  delete r.login
  r.team_command = { action: 'create', command_id: 'c1', command_name: name, is_active: true }
  return r
}

t.test('destinations', async (t) => {
  const rx = {
    high: await startReceiver(),
    slack: await startReceiver(),
    flaky: await startReceiver(),
    down: await startReceiver(() => ({ status: 503 })),
    hang: await startReceiver(() => 'hang'),
  } satisfies Record<string, Receiver>
  t.teardown(() => Promise.all(Object.values(rx).map((r) => r.close())))
  const secret = 'whsec-test-1'
  const config = {
    destinations: [
      { id: 'sev-high', type: 'webhook', url: rx.high.url, severities: ['HIGH'], secretEnv: 'RK_SECRET' },
      { id: 'slack-crit', type: 'slack', urlEnv: 'RK_SLACK', severities: ['CRITICAL'] },
      { id: 'flaky', type: 'webhook', url: rx.flaky.url },
      { id: 'down', type: 'webhook', url: rx.down.url },
      { id: 'hang', type: 'webhook', url: rx.hang.url, severities: ['HIGH'], timeoutMs: 300, concurrency: 1 },
    ],
    delivery: { attempts: 5, firstDelayMs: 40, maxDelayMs: 300, budgetMinutes: 1, timeoutMs: 2000 },
  }
  const dataDir = tempDir('rk-dest-')
  const env = { RULEKEEPER_EDITOR_AUDIT_TOKEN: TOKEN, RK_SECRET: secret, RK_SLACK: rx.slack.url }
  let s: InProcessServer = await startInProcess({ dataDir, env, config })
  t.teardown(() => s.close())

  const rule = async (id: string, name: string, extra: Record<string, unknown>) => {
    const res = await s.request('POST', '/simple-rules', {
      ...SAMPLE_BODIES.simple(id, {
        logTypes: ['Editor.Audit'],
        detection: `- KeyPath: team_command.command_name\n  Condition: Equals\n  Value: ${name}\n`,
        tests: [],
      }),
      groupBy: '- Key: user_email\n',
      ...extra,
    })
    if (res.status !== 200) throw new Error(`rule: ${res.status} ${res.text}`)
  }
  const send = async (records: unknown[]) => {
    const res = await postLog(s, ndjson(records))
    if (res.status !== 200) throw new Error(`ingest ${res.status}`)
    await s.server.detection.detector.idle()
  }
  const alertsOf = async (ruleId: string) =>
    (await s.request('GET', `/alerts?rule-id=${ruleId}&limit=1000`)).body.results as any[]
  // Bounded waits; 5 timed-out attempts of two alerts one at a time took ~5 s alone and over 15 s
  // under a loaded parallel suite, so the bound is generous (it only ends a wait that never ends).
  const waitAlert = async (id: string, ok: (a: any) => boolean, what: string) => {
    const end = Date.now() + 45_000
    for (;;) {
      const a = (await s.request('GET', `/alerts/${id}`)).body
      if (ok(a)) return a
      if (Date.now() > end) throw new Error(`timed out: ${what}: ${JSON.stringify(a.destinations)}`)
      await new Promise((r) => setTimeout(r, 25)) // wait: poll interval of a wait on a condition
    }
  }

  await t.test('severity routing; a hanging destination slows neither detection nor the others', async (t) => {
    await rule('D.High', 'high', { severity: 'HIGH' })
    await rule('D.Crit', 'crit', { severity: 'CRITICAL' })
    const started = Date.now()
    await send([cmd('high', { user_email: 'a@x' }), cmd('high', { user_email: 'b@x' }), cmd('crit')])
    // The alerts exist from here (detection idle): their delivery is timed from this moment.
    const sent = Date.now()
    t.ok(sent - started < 5000, 'detection committed without waiting on any receiver')
    const high = await alertsOf('D.High')
    const [crit] = await alertsOf('D.Crit')
    t.equal(high.length, 2)
    await rx.high.until(() => rx.high.acked().size === 2, 'both HIGH alerts at sev-high')
    await rx.slack.until(() => rx.slack.acked().size === 1, 'the CRITICAL alert at slack-crit')
    t.ok(
      rx.high.got.every((r) => r.at - sent < 3000),
      `delivered while the hanging receiver hangs (at ${rx.high.got.map((r) => r.at - sent).join(', ')} ms after detection)`,
    )
    for (const r of rx.high.got)
      t.equal(r.signature, `sha256=${createHmac('sha256', secret).update(r.body).digest('hex')}`, 'signed body')
    t.same(new Set(rx.high.acked().keys()), new Set(high.map((a) => a.id)), 'Idempotency-Key = alert id')
    const body = JSON.parse(rx.high.got[0]!.body)
    // The alert as the API lists it, without the analysts' triage (its assignee) made after it.
    const listed = Object.keys(high[0]).filter((k) => k !== 'assignee')
    t.same(Object.keys(body).sort(), listed.sort(), 'the body is the alert shape')
    const slack = JSON.parse(rx.slack.got[0]!.body)
    t.equal(slack.text, `[CRITICAL] ${crit.title}`)
    t.equal(rx.slack.got[0]!.key, crit.id)
    t.equal(rx.flaky.got.length + rx.down.got.length, 0, 'destinations subscribed to no severity get nothing')
    const a = await waitAlert(
      high[0].id,
      (a) => a.destinations.find((d: any) => d.id === 'sev-high')?.state === 'delivered',
      'delivered state',
    )
    t.same(
      a.destinations.map((d: any) => d.id),
      ['sev-high', 'hang'],
    )
    await waitAlert(high[0].id, (a) => a.destinations[1].state === 'failed', 'the hanging one becomes a dead letter')
    const after = await waitAlert(high[0].id, () => true, '')
    t.equal(after.destinations[1].attempts, 5)
    t.equal(after.destinations[1].lastError, 'timed out')
  })

  await t.test('OutputIds; a receiver failing then recovering gets every alert, once per key', async (t) => {
    // 500, 429 with Retry-After: 0, a dropped connection, then 200 for everything
    const bad: Array<'500' | '429' | 'drop'> = ['500', '429', 'drop', '500', '429', 'drop']
    rx.flaky.mode = (_r, n) =>
      n >= bad.length
        ? { status: 200 }
        : bad[n] === 'drop'
          ? 'drop'
          : bad[n] === '429'
            ? { status: 429, headers: { 'retry-after': '0' } }
            : { status: 500 }
    await rule('D.Flaky', 'flaky', { severity: 'LOW', outputIDs: ['flaky', 'not-configured'] })
    await send(['a', 'b', 'c', 'd'].map((u) => cmd('flaky', { user_email: `${u}@x` })))
    const alerts = await alertsOf('D.Flaky')
    t.equal(alerts.length, 4)
    await rx.flaky
      .until(() => rx.flaky.acked().size === 4, 'all four acknowledged')
      .catch(async (e) => {
        console.error(
          rx.flaky.got.map((r) => [r.key.slice(0, 6), r.answered, r.attempt]),
          JSON.stringify((await alertsOf('D.Flaky')).map((a) => a.destinations)),
        )
        throw e
      })
    for (const a of alerts) t.equal(rx.flaky.acked().get(a.id), 1, 'acknowledged once per key')
    t.equal(rx.flaky.got.length, 4 + bad.length, 'every failure retried, nothing more')
    const status = (await s.request('GET', '/status')).body
    t.same(status.destinations.unknown, [{ ruleId: 'D.Flaky', outputId: 'not-configured' }])
    t.equal(rx.high.got.filter((r) => alerts.some((a) => a.id === r.key)).length, 0, 'OutputIds override severity')
  })

  await t.test('4xx fails at once; down past the budget: dead letter, then redelivery (API and CLI)', async (t) => {
    await rule('D.Down', 'down', { severity: 'LOW', outputIDs: ['down'] })
    await send([
      cmd('down', { user_email: 'p@x' }),
      cmd('down', { user_email: 'q@x' }),
      cmd('down', { user_email: 'r@x' }),
    ])
    const [a1, a2, a3] = await alertsOf('D.Down')
    rx.down.mode = (r) => (r.key === a3.id ? { status: 400 } : { status: 503 })
    for (const a of [a1, a2]) await waitAlert(a.id, (x) => x.destinations[0].state === 'failed', 'dead letter')
    const dead = await waitAlert(a3.id, (x) => x.destinations[0].state === 'failed', '400: failed')
    t.same(dead.destinations[0], { id: 'down', state: 'failed', attempts: 1, lastError: 'HTTP 400 Bad Request' })
    const one = (await s.request('GET', `/alerts/${a1.id}`)).body.destinations[0]
    t.same(one, { id: 'down', state: 'failed', attempts: 5, lastError: 'HTTP 503 Service Unavailable' })
    const status = (await s.request('GET', '/status')).body
    t.same(
      status.delivery.failed
        .filter((f: any) => f.destinationId === 'down')
        .map((f: any) => f.alertId)
        .sort(),
      [a1.id, a2.id, a3.id].sort(),
    )
    const metrics = (await s.request('GET', '/metrics')).text
    t.match(metrics, /rulekeeper_destination_deliveries\{destination="down",state="failed"\} 3/)
    t.match(metrics, /rulekeeper_destination_deliveries_total\{destination="down",outcome="failed"\} 3/)
    // the receiver recovers; redeliver one by the API, one by the CLI's request file
    rx.down.mode = () => ({ status: 204 })
    const res = await s.request('POST', `/alerts/${a1.id}/deliveries/retry`)
    t.equal(res.status, 202)
    t.equal(res.body.id, a1.id)
    t.equal(await main(['alerts', 'redeliver', a2.id, '--data-dir', dataDir, '--json'], {}), 0)
    await rx.down.until(() => rx.down.acked().size === 2, 'both redelivered')
    t.same(new Set(rx.down.acked().keys()), new Set([a1.id, a2.id]), 'same idempotency keys')
    const again = await waitAlert(a1.id, (x) => x.destinations[0].state === 'delivered', 'delivered')
    t.equal(again.destinations[0].attempts, 1, 'a redelivery starts a new round')
    t.equal((await s.request('POST', `/alerts/${'0'.repeat(32)}/deliveries/retry`)).status, 404)
  })

  await t.test('pending deliveries survive a restart and keep their key', async (t) => {
    rx.flaky.mode = () => ({ status: 503 })
    await rule('D.Restart', 'restart', { severity: 'LOW', outputIDs: ['flaky'] })
    const before = rx.flaky.got.length
    await send([cmd('restart')])
    const [a] = await alertsOf('D.Restart')
    await rx.flaky.until(() => rx.flaky.got.length > before, 'a first attempt')
    await s.close()
    rx.flaky.mode = () => ({ status: 200 })
    s = await startInProcess({ dataDir, env, config })
    await rx.flaky.until(() => rx.flaky.acked().get(a.id) === 1, 'delivered after the restart')
    t.equal(rx.flaky.got.filter((r) => r.key === a.id).length > 1, true, 'failed before, delivered after, same key')
    await waitAlert(a.id, (x) => x.destinations[0].state === 'delivered', 'delivered state after the restart')
    // delivered ones are not sent again after a restart
    t.equal(rx.high.got.length, rx.high.acked().size)
  })
})
