// POST /correlation-rules/{id}/run, in process, over signals of two real simple rules POSTed to the
// real log source: a Sequence run now at a set clock creates its alert and answers the window, the
// signals counted and the alert ids; the same window again adds nothing; a new signal updates the
// alert; /status shows the run. 404 for an unknown id or a rule of another kind, 409 for a disabled
// rule and for a run already due, 403 without Manage Rules, 503 once detection has stopped.
import t from 'tap'
import { ndjson, TOKEN } from '../ingest/helpers.js'
import { commandRecord, DETECT_ENV } from '../detect/helpers.js'
import { type InProcessServer, startInProcess } from '../helpers/in-process.js'
import { SAMPLE_BODIES } from '../helpers/rulekeeper.js'

const at = (hhmm: string) => `2026-11-20T${hhmm}:00Z`
const rec = (name: string, hhmm: string, user: string) => commandRecord('run', name, at(hhmm), { user_email: user })
const ACTOR = '- KeyName: actor\n  KeyValue:\n    Key: user_email\n'
const SEQUENCE =
  '- Sequence:\n    - ID: Failures\n      RuleID: R.Fail\n      MinMatchCount: 3\n    - ID: Success\n      RuleID: R.Ok\n' +
  '  Transitions:\n    - ID: Failures FOLLOWED BY Success\n      From: Failures\n      To: Success\n      WithinTimeFrameMinutes: 30\n' +
  '      Match:\n        - On: p_alert_context.actor\n  LookbackWindowMinutes: 60\n  Schedule:\n    RateMinutes: 60\n    TimeoutMinutes: 5\n'

async function send(s: InProcessServer, records: unknown[]): Promise<void> {
  const res = await s.send('POST', '/http/editor-audit', ndjson(records), {
    Authorization: `Bearer ${TOKEN}`,
    'Content-Type': 'application/x-ndjson',
  })
  if (res.status !== 200) throw new Error(`ingest: ${res.status} ${res.text}`)
  await s.service.detection.detector.idle()
}

t.test('POST /correlation-rules/{id}/run', async (t) => {
  let clock = Date.parse(at('09:00'))
  const s = await startInProcess({ env: DETECT_ENV, correlationSchedule: { now: () => clock, syncMs: 20 } })
  t.teardown(() => s.close())
  for (const [id, name] of [
    ['R.Fail', 'rfail'],
    ['R.Ok', 'rok'],
  ] as const) {
    const r = await s.request('POST', '/simple-rules', {
      ...SAMPLE_BODIES.simple(id, {
        logTypes: ['Editor.Audit'],
        detection: `- KeyPath: team_command.command_name\n  Condition: Equals\n  Value: ${name}\n`,
        tests: [],
      }),
      createAlert: false,
      alertContext: ACTOR,
    })
    t.equal(r.status, 200, r.text)
  }
  await send(s, [
    rec('rfail', '10:00', 'dana@example.com'),
    rec('rfail', '10:05', 'dana@example.com'),
    rec('rfail', '10:10', 'dana@example.com'),
    rec('rok', '10:15', 'dana@example.com'),
  ])
  for (const [id, extra] of [
    ['C.Run', {}],
    ['C.Off', { enabled: false }],
  ] as const) {
    const r = await s.request('POST', '/correlation-rules', {
      ...SAMPLE_BODIES.correlation(id, { detection: SEQUENCE, tests: [] }),
      ...extra,
    })
    t.equal(r.status, 200, r.text)
  }
  // The schedule runs a new rule at once: at 09:00 its window [08:00, 09:00) holds nothing.
  const statusOf = async () =>
    ((await s.request('GET', '/status')).body.detection.correlation.rules as any[]).find((r) => r.ruleId === 'C.Run')
  const until = Date.now() + 10_000
  while ((await statusOf())?.runs !== 1) {
    if (Date.now() > until) throw new Error('the schedule did not run the new rule')
    await new Promise((r) => setTimeout(r, 20)) // wait: poll interval of a wait on a condition
  }
  t.same((await s.request('GET', '/alerts?rule-id=C.Run')).body.results, [], 'no alert from the scheduled run')

  clock = Date.parse(at('10:30'))
  const run = await s.request('POST', '/correlation-rules/C.Run/run')
  t.equal(run.status, 200, run.text)
  const alerts = (await s.request('GET', '/alerts?rule-id=C.Run')).body.results as any[]
  t.equal(alerts.length, 1, 'the run created the alert')
  t.match(run.body, {
    ruleId: 'C.Run',
    evaluatedAt: '2026-11-20T10:30:00.000Z',
    window: { from: '2026-11-20T09:30:00.000Z', to: '2026-11-20T10:30:00.000Z' },
    outcome: 'ok',
    matches: 1,
    signalsCounted: 4,
    alertsCreated: [alerts[0].id],
    alertsUpdated: [],
    durationMs: Number,
    error: null,
  })
  t.match(alerts[0], { dedup: 'dana@example.com', eventCount: 4 })
  t.match((await statusOf()).lastRun, { evaluatedAt: '2026-11-20T10:30:00.000Z', outcome: 'ok', alertsCreated: 1 })

  const again = await s.request('POST', '/correlation-rules/C.Run/run')
  t.match(again.body, { outcome: 'ok', matches: 1, signalsCounted: 0, alertsCreated: [], alertsUpdated: [] })
  t.same((await s.request('GET', '/alerts?rule-id=C.Run')).body.results, alerts, 'the same window adds nothing')

  await send(s, [rec('rok', '10:20', 'dana@example.com')])
  clock = Date.parse(at('10:35'))
  const more = await s.request('POST', '/correlation-rules/C.Run/run')
  t.match(more.body, { signalsCounted: 1, alertsCreated: [], alertsUpdated: [alerts[0].id] }, 'a new signal: updated')
  t.equal((await s.request('GET', `/alerts/${alerts[0].id}`)).body.eventCount, 5)

  t.test('404, 409, 403', async (t) => {
    const unknown = await s.request('POST', '/correlation-rules/C.Nope/run')
    t.equal(unknown.status, 404)
    t.match(unknown.body.message, /correlation rule C.Nope not found/)
    t.equal(
      (await s.request('POST', '/correlation-rules/R.Fail/run')).status,
      404,
      'a simple rule is no correlation rule',
    )
    const off = await s.request('POST', '/correlation-rules/C.Off/run')
    t.equal(off.status, 409)
    t.match(off.body.message, /C.Off is disabled/)
    const unknownParam = await s.request('POST', '/correlation-rules/C.Run/run?now=1')
    t.equal(unknownParam.status, 400)
    const viewer = await s.makeToken('viewer', ['View Rules', 'View Alerts'])
    const denied = await s.send('POST', '/correlation-rules/C.Run/run', undefined, { 'X-API-Key': viewer })
    t.equal(denied.status, 403)
    t.match(denied.body.message, /Manage Rules/)
    // A run queued (by the schedule or a person) and not finished: another is refused, not piled up.
    const first = s.service.detection.correlation.runNow('C.Run')
    const second = await s.request('POST', '/correlation-rules/C.Run/run')
    t.equal(second.status, 409, second.text)
    t.match(second.body.message, /already in progress or due/)
    t.match(await first, { outcome: 'ok' }, 'the first run goes on')
  })

  t.test('503 once detection has stopped; nothing ran', async (t) => {
    const before = (await statusOf()).runs
    // A file announced that cannot be read stops detection (it resumes at the next start).
    s.service.detection.detector.notify([{ file: 'Editor.Audit/dt=2026-11-20/hour=10/gone.ndjson', size: 100 }])
    await s.service.detection.detector.idle()
    const r = await s.request('POST', '/correlation-rules/C.Run/run')
    t.equal(r.status, 503)
    t.match(r.body.message, /detection has stopped/)
    t.equal((await statusOf()).runs, before, 'no run counted')
  })
})
