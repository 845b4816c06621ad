// Correlation rules on their schedule (alerts.md §5) through the real ingest path: signals of two
// simple rules (CreateAlert false) POSTed to the real log source; a Sequence, a Group and a Group
// with an Absence member evaluated over the stored signals at a set clock; their alerts routed to a
// real receiver. Overlapping windows add nothing twice, the window's end is exclusive, a disabled
// rule never runs, the rate timer runs again, a restart on the same data dir (which runs every
// rule at start) creates no duplicate, and a run while detection is stopped is a rule error.
// Real port: a remote (the receiver; the service runs in process).
import t from 'tap'
import { commandRecord, commandRule, DETECT_ENV, sendAndDetect } from './helpers.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'

const at = (hhmm: string) => `2026-11-20T${hhmm}:00Z`
const ms = (hhmm: string) => Date.parse(at(hhmm))
const rec = (name: string, hhmm: string, user: string) => commandRecord('cs', name, at(hhmm), { user_email: user })

const ACTOR = '- KeyName: actor\n  KeyValue:\n    Key: user_email\n'
const SEQUENCE =
  '- Sequence:\n    - ID: Failures\n      RuleID: C.Fail\n      MinMatchCount: 3\n    - ID: Success\n      RuleID: C.Ok\n' +
  '  Transitions:\n    - ID: Failures FOLLOWED BY Success\n      From: Failures\n      To: Success\n      WithinTimeFrameMinutes: 30\n' +
  '      Match:\n        - On: p_alert_context.actor\n  LookbackWindowMinutes: 60\n  Schedule:\n    RateMinutes: 60\n    TimeoutMinutes: 5\n'
// Two join fields: the actor from the signal's alertContext, the team from its record.
const GROUP =
  '- Group:\n    - ID: A\n      RuleID: C.Fail\n    - ID: B\n      RuleID: C.Ok\n' +
  '  MatchCriteria:\n    actor:\n      - GroupID: A\n        Match: p_alert_context.actor\n      - GroupID: B\n        Match: p_alert_context.actor\n' +
  '    team:\n      - GroupID: A\n        Match: team_id\n      - GroupID: B\n        Match: team_id\n' +
  '  LookbackWindowMinutes: 60\n  Schedule:\n    CronExpression: "*/30 * * * *"\n    TimeoutMinutes: 5\n'

// Three failures and no success of the same actor in the window.
const ABSENCE =
  '- Group:\n    - ID: A\n      RuleID: C.Fail\n      MinMatchCount: 3\n    - ID: B\n      RuleID: C.Ok\n      Absence: true\n' +
  '  MatchCriteria:\n    actor:\n      - GroupID: A\n        Match: p_alert_context.actor\n      - GroupID: B\n        Match: p_alert_context.actor\n' +
  '  LookbackWindowMinutes: 60\n  Schedule:\n    RateMinutes: 60\n    TimeoutMinutes: 5\n'

t.test('correlation rules on their schedule', async (t) => {
  const rx: Receiver = await startReceiver()
  t.teardown(() => rx.close())
  const dataDir = tempDir('rk-correl-')
  let clock = ms('10:30')
  // A schedule minute of 20 ms: RateMinutes 60 comes round every 1.2 s (the rate test below).
  const start = () =>
    startInProcess({
      dataDir,
      env: DETECT_ENV,
      config: { destinations: [{ id: 'high', type: 'webhook', url: rx.url, severities: ['HIGH'] }] },
      correlationSchedule: { now: () => clock, minuteMs: 20, syncMs: 50 },
    })
  let s: InProcessServer = await start()
  t.teardown(() => s.close())
  const run = () => s.server.detection.correlation.runAll()
  const alertsOf = async (ruleId: string) =>
    (await s.request('GET', `/alerts?rule-id=${encodeURIComponent(ruleId)}&limit=1000`)).body.results as any[]
  const statusOf = async (ruleId: string) =>
    ((await s.request('GET', '/status')).body.detection.correlation.rules as any[]).find((r) => r.ruleId === ruleId)

  await commandRule(s, 'C.Fail', 'cfail', { createAlert: false, alertContext: ACTOR })
  await commandRule(s, 'C.Ok', 'cok', { createAlert: false, alertContext: ACTOR })
  const correlation = async (id: string, detection: string, extra: Record<string, unknown> = {}) => {
    const res = await s.request('POST', '/correlation-rules', {
      ...SAMPLE_BODIES.correlation(id, { detection, tests: [] }),
      ...extra,
    })
    t.equal(res.status, 200, res.text)
  }
  await sendAndDetect(s, [
    // dana: three failures then a success within 30 minutes
    rec('cfail', '10:00', 'dana@example.com'),
    rec('cfail', '10:05', 'dana@example.com'),
    rec('cfail', '10:10', 'dana@example.com'),
    rec('cok', '10:15', 'dana@example.com'),
    // eli: failures only
    rec('cfail', '10:01', 'eli@example.com'),
    rec('cfail', '10:02', 'eli@example.com'),
    rec('cfail', '10:03', 'eli@example.com'),
    // hal: the success lands exactly at 10:50
    rec('cfail', '10:20', 'hal@example.com'),
    rec('cfail', '10:21', 'hal@example.com'),
    rec('cfail', '10:22', 'hal@example.com'),
    rec('cok', '10:50', 'hal@example.com'),
  ])
  await correlation('C.Brute', SEQUENCE)
  await correlation('C.Off', SEQUENCE, { enabled: false })
  await correlation('C.Pair', GROUP, { severity: 'LOW' })
  await correlation('C.NoOk', ABSENCE, { severity: 'LOW' })

  let brute: any
  await t.test('a Sequence over two rules’ signals fires once, with the signals’ event times', async (t) => {
    await run()
    const alerts = await alertsOf('C.Brute')
    t.equal(alerts.length, 1, 'only dana completes the sequence in [09:30, 10:30)')
    brute = alerts[0]
    t.equal(brute.dedup, 'dana@example.com', 'dedup: the join value')
    t.equal(brute.ruleKind, 'correlation')
    t.equal(brute.severity, 'HIGH')
    t.equal(brute.eventCount, 4)
    t.equal(brute.firstEventTime, '2026-11-20T10:00:00.000Z')
    t.equal(brute.lastEventTime, '2026-11-20T10:15:00.000Z')
    t.same(brute.alertContext, { joinValue: 'dana@example.com', signals: { Failures: 3, Success: 1 } })
    // The revision served at the run that created it (a run starts as soon as a rule is served).
    t.match(brute.revision, /^[0-9a-f]{40}$/)
    t.equal(s.git('cat-file', '-t', brute.revision).trim(), 'commit')
    const events = (await s.request('GET', `/alerts/${brute.id}/events`)).body.results as any[]
    t.same(
      events
        .map((e) => [e.team_command.command_name, e.user_email, new Date(e.p_event_time).toISOString()])
        .sort((a, b) => (a[2] < b[2] ? -1 : 1)),
      [
        ['cfail', 'dana@example.com', '2026-11-20T10:00:00.000Z'],
        ['cfail', 'dana@example.com', '2026-11-20T10:05:00.000Z'],
        ['cfail', 'dana@example.com', '2026-11-20T10:10:00.000Z'],
        ['cok', 'dana@example.com', '2026-11-20T10:15:00.000Z'],
      ],
      'the events of the alert are the stored records of its signals',
    )
    t.same(await alertsOf('C.Off'), [], 'a disabled correlation rule never runs')
    t.equal(await statusOf('C.Off'), undefined, 'nor is it scheduled')
  })

  await t.test('the alert is routed and delivered like any alert', async (t) => {
    await rx.until(() => rx.got.length >= 1, 'the correlation alert delivered')
    t.equal(rx.got[0]!.key, brute.id, 'Idempotency-Key: the alert id')
    t.equal(JSON.parse(rx.got[0]!.body).id, brute.id)
    const one = (await s.request('GET', `/alerts/${brute.id}`)).body
    t.same(
      one.destinations.map((d: any) => d.id),
      ['high'],
    )
  })

  await t.test('a Group joining on two fields: the dedup is their JSON array (record fields visible)', async (t) => {
    const alerts = await alertsOf('C.Pair')
    t.same(
      alerts.map((a) => [a.dedup, a.eventCount]),
      [['["dana@example.com","4821"]', 4]],
    )
  })

  await t.test('an Absence member: failures without a success of the same actor', async (t) => {
    t.same(
      (await alertsOf('C.NoOk')).map((a) => [a.dedup, a.eventCount]).sort(),
      [
        ['eli@example.com', 3],
        ['hal@example.com', 3],
      ],
      'dana had a success; hal’s is not in [09:30, 10:30) yet',
    )
  })

  await t.test('an overlapping window finds the same group and adds nothing twice', async (t) => {
    const before = await alertsOf('C.Brute')
    clock = ms('10:45')
    await run()
    await run()
    t.same(await alertsOf('C.Brute'), before, 'the same alert, unchanged')
    // a new success for dana: the next overlapping run adds it, and only it, to the same alert
    await sendAndDetect(s, [rec('cok', '10:40', 'dana@example.com')])
    clock = ms('10:50')
    await run()
    const after = await alertsOf('C.Brute')
    t.equal(after.length, 1, 'hal’s success at exactly 10:50 is outside [09:50, 10:50)')
    t.equal(after[0].id, brute.id)
    t.equal(after[0].eventCount, 5)
    t.equal(after[0].lastEventTime, '2026-11-20T10:40:00.000Z')
    clock = ms('10:51')
    await run()
    const hal = (await alertsOf('C.Brute')).filter((a) => a.dedup === 'hal@example.com')
    t.equal(hal.length, 1, 'one minute later it is inside')
    t.equal(hal[0].eventCount, 4)
    await rx.until(() => rx.got.length >= 2, 'hal’s alert delivered')
    await new Promise((r) => setTimeout(r, 200)) // wait: nothing more is delivered within 200 ms
    t.same(
      rx.got.map((g) => g.key).sort(),
      [brute.id, hal[0].id].sort(),
      'one notification per alert: re-evaluation notifies nobody again',
    )
  })

  await t.test('the rate timer runs the rule again; /status and /metrics show the runs', async (t) => {
    const first = await statusOf('C.Brute')
    t.same(first.schedule, { rateMinutes: 60 })
    const end = Date.now() + 10_000
    let now = first
    while (now.runs < first.runs + 2 && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 50)) // wait: poll interval of a wait on a condition
      now = await statusOf('C.Brute')
    }
    t.ok(now.runs >= first.runs + 2, `two more runs by the timer (${first.runs} → ${now.runs})`)
    t.equal(now.lastRun.outcome, 'ok')
    t.equal(now.lastRun.evaluatedAt, '2026-11-20T10:51:00.000Z')
    t.equal(now.lastError, null)
    t.ok(Date.parse(now.nextRunAt) > Date.now() - 1000, 'the next run is ahead')
    const pair = await statusOf('C.Pair')
    t.same(pair.schedule, { cronExpression: '*/30 * * * *' })
    t.equal(new Date(pair.nextRunAt).getUTCMinutes() % 30, 0, 'the cron expression’s next time, in UTC')
    t.equal((await alertsOf('C.Brute')).length, 2, 'the timer’s runs added no alert')
    const metrics = (await s.send('GET', '/metrics')).text
    const runs = Number(/^rulekeeper_correlation_evaluations_total\{outcome="ok"\} (\d+)/m.exec(metrics)?.[1])
    t.ok(runs >= 6, `evaluations counted (${runs})`)
    t.match(
      metrics,
      /^rulekeeper_correlation_alerts_total 6$/m,
      'six correlation alerts: dana and hal by C.Brute and C.Pair, eli and hal by C.NoOk',
    )
    t.same(
      (await alertsOf('C.NoOk')).map((a) => a.dedup).sort(),
      ['eli@example.com', 'hal@example.com'],
      'hal’s success, now in the window, makes no new alert (and the old one stays)',
    )
  })

  await t.test('a restart runs every rule at start and creates no duplicate', async (t) => {
    const before = (await s.request('GET', '/alerts?limit=1000')).body.results as any[]
    await s.close()
    clock = ms('10:55')
    s = await start()
    const end = Date.now() + 10_000
    for (;;) {
      const st = await statusOf('C.Brute')
      if (st?.lastRun?.evaluatedAt === '2026-11-20T10:55:00.000Z') break
      if (Date.now() > end) throw new Error('no run at start')
      await new Promise((r) => setTimeout(r, 20)) // wait: poll interval of a wait on a condition
    }
    await run()
    t.same((await s.request('GET', '/alerts?limit=1000')).body.results, before, 'the same alerts, unchanged')
    await new Promise((r) => setTimeout(r, 200)) // wait: nothing is delivered again within 200 ms
    t.equal(rx.got.length, 2, 'no delivery again')
  })

  await t.test('detection stopped: a run is skipped and recorded as a rule error of the rule', async (t) => {
    // A file announced that cannot be read stops detection (it resumes at the next start).
    s.server.detection.detector.notify([{ file: 'Editor.Audit/dt=2026-11-20/hour=10/gone.ndjson', size: 100 }])
    await s.server.detection.detector.idle()
    t.equal((await s.request('GET', '/status')).body.detection.failed, true)
    clock = ms('11:00')
    await run()
    const st = await statusOf('C.Brute')
    t.equal(st.lastRun.outcome, 'skipped')
    t.match(st.lastError.error, /detection had not evaluated the records accepted before 2026-11-20T11:00:00.000Z/)
    // The timer's runs (every 1.2 s here) are skipped too, each with its own rule error.
    const errors = (await s.request('GET', '/rule-errors?rule-id=C.Brute')).body.results as any[]
    t.ok(errors.length >= 1)
    t.same(errors[0].record, null)
    t.match(errors[0].error, /^detection had not evaluated the records accepted before /)
    t.ok(
      errors.some((e) => e.error === st.lastError.error),
      'the run at 11:00 is listed',
    )
    const metrics = (await s.send('GET', '/metrics')).text
    // four rules scheduled: C.Brute, C.Pair, C.NoOk and the template's Editor.Audit.BruteForceThenSuccess
    const skipped = Number(/^rulekeeper_correlation_evaluations_total\{outcome="skipped"\} (\d+)$/m.exec(metrics)?.[1])
    t.ok(skipped >= 4, `every scheduled rule skipped (${skipped})`)
    // Counted without the rule's id (/metrics is unauthenticated); GET /rule-errors names it.
    t.match(metrics, /^rulekeeper_detection_rule_errors_total [1-9]\d*$/m)
    t.notMatch(metrics, /C\.Brute/)
  })
})
