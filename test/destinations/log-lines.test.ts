// The log lines of alerts and deliveries, captured from the service's own pino logger in process:
// one `alert created` line per alert (rule, alert id, dedup, severity, event count, destinations)
// once it is committed, one line per delivery attempt's outcome (alert, destination, attempt, HTTP
// status or error, next retry): delivered, failed and retried, failed for good (a dead letter). No
// line carries the alert's events or context, a destination's URL or its secret.
// Real port: a remote (the receivers; the service runs in process).
import t from 'tap'
import { ndjson, TOKEN } from '../ingest/helpers.js'
import { commandRecord } from '../detect/helpers.js'
import { startInProcess } from '../helpers/in-process.js'
import { startReceiver } from '../helpers/receiver.js'
import { SAMPLE_BODIES } from '../helpers/rulekeeper.js'

const MARKER = 'record-content-7f3a9c' // in each record and its alert context: never in a log line
const SECRET = 'whsec-log-lines-5b1e'

t.test('alert and delivery log lines', async (t) => {
  const ok = await startReceiver()
  // 503 to each alert's first two attempts, then 200; and a 400 (never retried).
  const flaky = await startReceiver((r) =>
    flaky.got.filter((g) => g.key === r.key).length < 2 ? { status: 503 } : { status: 200 },
  )
  const refuses = await startReceiver(() => ({ status: 400 }))
  t.teardown(() => Promise.all([ok.close(), flaky.close(), refuses.close()]))
  const lines: string[] = []
  const s = await startInProcess({
    env: { RULEKEEPER_EDITOR_AUDIT_TOKEN: TOKEN, RK_LOG_SECRET: SECRET },
    logLines: lines,
    config: {
      destinations: [
        { id: 'ok', type: 'webhook', url: ok.url, severities: ['HIGH'], secretEnv: 'RK_LOG_SECRET' },
        { id: 'flaky', type: 'webhook', url: flaky.url, severities: ['HIGH'] },
        { id: 'refuses', type: 'webhook', url: refuses.url, severities: ['HIGH'] },
      ],
      delivery: { attempts: 5, firstDelayMs: 30, maxDelayMs: 100, budgetMinutes: 1, timeoutMs: 2000 },
    },
  })
  t.teardown(() => s.close())
  const rule = await s.request('POST', '/simple-rules', {
    ...SAMPLE_BODIES.simple('Log.Lines', {
      logTypes: ['Editor.Audit'],
      detection: '- KeyPath: team_command.command_name\n  Condition: Equals\n  Value: logme\n',
      tests: [],
    }),
    severity: 'HIGH',
    groupBy: '- Key: user_email\n',
    alertContext: `- KeyName: marker\n  KeyValue:\n    Key: marker\n`,
  })
  t.equal(rule.status, 200, rule.text)
  const rec = (user: string, minute: number) =>
    commandRecord('log', 'logme', `2026-11-20T10:0${minute}:00Z`, { user_email: user, marker: MARKER })
  const ingest = await s.send(
    'POST',
    '/http/editor-audit',
    ndjson([rec('dana@example.com', 1), rec('dana@example.com', 2), rec('eli@example.com', 3)]),
    { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/x-ndjson' },
  )
  t.equal(ingest.status, 200, ingest.text)
  await s.service.detection.detector.idle()
  const alerts = (await s.request('GET', '/alerts?rule-id=Log.Lines')).body.results as any[]
  t.equal(alerts.length, 2)
  const dana = alerts.find((a) => a.dedup.includes('dana'))

  const records = () => lines.map((l) => JSON.parse(l))
  const until = async (ok: () => boolean, what: string) => {
    const end = Date.now() + 10_000
    while (!ok()) {
      if (Date.now() > end)
        throw new Error(
          `never: ${what}: ${records()
            .map((r) => r.msg)
            .join(' / ')}`,
        )
      await new Promise((r) => setTimeout(r, 20)) // wait: poll interval of a wait on a condition
    }
  }
  const byMsg = (msg: string) => records().filter((r) => r.msg === msg)
  await until(() => byMsg('alert delivered').length >= 4, 'four deliveries acknowledged (ok and flaky, two alerts)')
  await until(
    () => records().filter((r) => String(r.msg).startsWith('delivery failed: kept as a dead letter')).length >= 2,
    'two dead letters at refuses',
  )

  const created = byMsg('alert created')
  t.equal(created.length, 2, 'one line per alert created')
  t.match(
    created.find((r) => r.alertId === dana.id),
    {
      level: 30,
      ruleId: 'Log.Lines',
      ruleKind: 'simple',
      alertId: dana.id,
      dedup: dana.dedup,
      severity: 'HIGH',
      eventCount: 2,
      destinations: ['ok', 'flaky', 'refuses'],
    },
  )
  const delivered = byMsg('alert delivered').filter((r) => r.alertId === dana.id)
  t.match(
    delivered.find((r) => r.destinationId === 'ok'),
    { level: 30, alertId: dana.id, destinationId: 'ok', attempt: 1, status: 200, error: null },
  )
  const retried = byMsg('delivery failed: will retry').filter(
    (r) => r.destinationId === 'flaky' && r.alertId === dana.id,
  )
  t.equal(retried.length, 2, 'the two 503s of flaky, each a line')
  t.match(retried[0], { level: 40, attempt: 1, status: 503, error: /^HTTP 503/, nextRetryAt: String })
  const firstTry = flaky.got.find((g) => g.key === dana.id)!.at
  t.ok(Date.parse(retried[0].nextRetryAt) > firstTry, 'the next retry is after the attempt')
  t.match(
    byMsg('alert delivered').find((r) => r.destinationId === 'flaky' && r.alertId === dana.id),
    { attempt: 3, status: 200 },
    'delivered at the third attempt',
  )
  const dead = records().filter(
    (r) => String(r.msg).startsWith('delivery failed: kept as a dead letter') && r.alertId === dana.id,
  )
  t.match(dead, [
    { level: 40, destinationId: 'refuses', attempt: 1, status: 400, error: /^HTTP 400/, nextRetryAt: null },
  ])
  t.ok(
    created[0].time <= records().find((r) => r.msg === 'alert delivered' || r.msg.startsWith('delivery failed')).time,
    'the alert line comes before its deliveries',
  )

  const text = lines.join('\n')
  t.notMatch(text, MARKER, 'no record or alert-context content in any line')
  t.notMatch(text, SECRET, 'no destination secret')
  for (const u of [ok.url, flaky.url, refuses.url]) t.notOk(text.includes(u), 'no destination URL')
})
