// Detection through the real ingest path: records POSTed to the real log-source route of a real
// server, evaluated from the stored log by the served rules, grouped into alerts and listed by the
// alert API. The grouping rules at their boundaries, signals, disabled rules, other log types, a
// rule change between records, rule errors, PATCH, pages, and a restart on the same data dir.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { commandRecord, commandRule, DETECT_ENV, postLog, sendAndDetect } from './helpers.js'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'
import { tempDir, SAMPLE_BODIES } from '../helpers/rulekeeper.js'
import { EXAMPLES, ndjson } from '../ingest/helpers.js'

const env = DETECT_ENV
const cmd = (name: string, timestamp: string, extra: Record<string, unknown> = {}) =>
  commandRecord('id', name, timestamp, extra)
const send = sendAndDetect

const rule = commandRule

const alertsOf = async (s: InProcessServer, ruleId: string) =>
  (await s.request('GET', `/alerts?rule-id=${encodeURIComponent(ruleId)}&limit=1000`)).body.results as any[]

const byFirst = (a: any[]) => [...a].sort((x, y) => (x.firstEventTime < y.firstEventTime ? -1 : 1))

t.test('detection on ingest', async (t) => {
  const dataDir = tempDir('rk-detect-')
  let s = await startInProcess({ dataDir, env })
  t.teardown(() => s.close())

  await t.test('the sample events: the template rule turns the privacy-mode change into an alert', async (t) => {
    const body = await readFile(path.join(EXAMPLES, 'valid.ndjson'))
    const res = await postLog(s, body)
    t.equal(res.status, 200)
    await s.server.detection.detector.idle()
    const [alert, ...more] = await alertsOf(s, 'Editor.Audit.PrivacyModeEnforcementDisabled')
    t.equal(more.length, 0)
    t.equal(alert.severity, 'HIGH')
    t.equal(alert.dedup, '["4821"]', 'GroupBy: the JSON array of the values')
    t.match(alert.title, /^Privacy-mode enforcement disabled by \[.+\] for team \[4821\]$/)
    t.equal(alert.status, 'OPEN')
    t.equal(alert.eventCount, 1)
    t.equal(alert.revision, s.server.catalog.index.revision)
    t.match(alert.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    const events = await s.request('GET', `/alerts/${alert.id}/events`)
    t.equal(events.status, 200)
    t.equal(events.body.results.length, 1)
    t.equal(events.body.results[0].team_settings.setting_name, 'privacy_mode_enforced')
    t.equal(events.body.next, null)
    const one = await s.request('GET', `/alerts/${alert.id}`)
    // One alert is the list's alert plus its comments and history (alert-triage.test.ts).
    const { comments, history, ...listed } = one.body
    t.same(listed, alert)
    t.same([comments, history], [[], []])
  })

  await t.test(
    'Threshold: exactly Threshold matches make the alert; t0 + DedupPeriodMinutes opens a new group',
    async (t) => {
      await rule(s, 'T.Threshold', 'thr', { threshold: 3, dedupPeriodMinutes: 60, summaryAttributes: ['user_email'] })
      await send(s, [cmd('thr', '2026-11-20T10:00:00Z'), cmd('thr', '2026-11-20T10:10:00Z')])
      t.same(await alertsOf(s, 'T.Threshold'), [], 'two of three: no alert yet')
      await send(s, [cmd('thr', '2026-11-20T10:59:59.999Z', { user_email: 'eli@example.com' })])
      let alerts = await alertsOf(s, 'T.Threshold')
      t.equal(alerts.length, 1, 'the third match in the window makes the alert')
      t.equal(alerts[0].eventCount, 3)
      t.equal(alerts[0].firstEventTime, '2026-11-20T10:00:00.000Z')
      t.equal(alerts[0].lastEventTime, '2026-11-20T10:59:59.999Z')
      t.same(alerts[0].summary, {
        user_email: [
          { value: 'dana@example.com', count: 2 },
          { value: 'eli@example.com', count: 1 },
        ],
      })
      // exactly t0 + 60 min is outside [t0, t0 + 60 min): a new group, below its threshold
      await send(s, [cmd('thr', '2026-11-20T11:00:00Z'), cmd('thr', '2026-11-20T11:05:00Z')])
      alerts = await alertsOf(s, 'T.Threshold')
      t.equal(alerts.length, 1)
      t.equal(alerts[0].eventCount, 3, 'the first alert is unchanged')
      await send(s, [cmd('thr', '2026-11-20T11:30:00Z'), cmd('thr', '2026-11-20T11:45:00Z')])
      alerts = byFirst(await alertsOf(s, 'T.Threshold'))
      t.equal(alerts.length, 2)
      t.equal(alerts[1].firstEventTime, '2026-11-20T11:00:00.000Z')
      t.equal(alerts[1].eventCount, 4, 'the match after Threshold is added to the alert')
      t.not(alerts[0].id, alerts[1].id)
    },
  )

  await t.test('out-of-order event times follow the stored order', async (t) => {
    await rule(s, 'T.Order', 'ord', { dedupPeriodMinutes: 60 })
    await send(s, [cmd('ord', '2026-11-20T10:00:00Z')])
    await send(s, [cmd('ord', '2026-11-20T09:30:00Z')]) // no group starts at or before it: a new one
    await send(s, [cmd('ord', '2026-11-20T10:20:00Z')]) // the latest start ≤ 10:20 is 10:00
    await send(s, [cmd('ord', '2026-11-20T09:59:00Z')]) // the latest start ≤ 09:59 is 09:30
    const alerts = byFirst(await alertsOf(s, 'T.Order'))
    t.same(
      alerts.map((a) => [a.firstEventTime, a.lastEventTime, a.eventCount]),
      [
        ['2026-11-20T09:30:00.000Z', '2026-11-20T09:59:00.000Z', 2],
        ['2026-11-20T10:00:00.000Z', '2026-11-20T10:20:00.000Z', 2],
      ],
    )
  })

  await t.test('two dedup strings are two alerts', async (t) => {
    await rule(s, 'T.Dedup', 'ddp', { groupBy: '- Key: user_email\n' })
    await send(s, [
      cmd('ddp', '2026-11-20T10:00:00Z', { user_email: 'a@example.com' }),
      cmd('ddp', '2026-11-20T10:01:00Z', { user_email: 'b@example.com' }),
      cmd('ddp', '2026-11-20T10:02:00Z', { user_email: 'a@example.com' }),
    ])
    const alerts = await alertsOf(s, 'T.Dedup')
    t.same(alerts.map((a) => [a.dedup, a.eventCount]).sort(), [
      ['["a@example.com"]', 2],
      ['["b@example.com"]', 1],
    ])
  })

  await t.test('CreateAlert false: signals only; disabled rules and other log types see nothing', async (t) => {
    await rule(s, 'T.Signal', 'sig', { createAlert: false })
    await rule(s, 'T.Disabled', 'sig', { enabled: false })
    await rule(s, 'T.OtherType', 'sig', { logTypes: ['AWS.CloudTrail'] })
    await send(s, [cmd('sig', '2026-11-20T10:00:00Z'), cmd('sig', '2026-11-20T10:01:00Z')])
    t.same(await alertsOf(s, 'T.Signal'), [])
    t.same(await alertsOf(s, 'T.Disabled'), [])
    t.same(await alertsOf(s, 'T.OtherType'), [])
    const matches = await s.server.detection.store.readMatches(
      Date.parse('2026-11-20T10:00:00Z'),
      Date.parse('2026-11-20T10:00:00Z'),
      () => true,
    )
    const sig = matches.filter((m) => m.ruleId === 'T.Signal')
    t.equal(sig.length, 2)
    t.ok(sig.every((m) => m.signal === true && m.alertId === null))
    t.equal(matches.filter((m) => m.ruleId === 'T.Disabled' || m.ruleId === 'T.OtherType').length, 0)
  })

  await t.test('a rule change between records: each match records the revision it ran with', async (t) => {
    await rule(s, 'T.Change', 'chg', { dedupPeriodMinutes: 1 })
    const r1 = s.server.catalog.index.revision
    await send(s, [cmd('chg', '2026-11-20T12:00:00Z')])
    const put = await s.request('PUT', '/simple-rules/T.Change', {
      ...SAMPLE_BODIES.simple('T.Change', {
        logTypes: ['Editor.Audit'],
        detection: '- KeyPath: team_command.command_name\n  Condition: Equals\n  Value: chg\n',
        severity: 'LOW',
        dedupPeriodMinutes: 1,
        tests: [],
      }),
    })
    t.equal(put.status, 200)
    const r2 = s.server.catalog.index.revision
    t.not(r1, r2)
    await send(s, [cmd('chg', '2026-11-20T12:10:00Z')])
    const alerts = byFirst(await alertsOf(s, 'T.Change'))
    t.same(
      alerts.map((a) => [a.revision, a.severity]),
      [
        [r1, 'HIGH'],
        [r2, 'LOW'],
      ],
    )
  })

  await t.test('PATCH: status only', async (t) => {
    const [a] = await alertsOf(s, 'T.Dedup')
    const ok = await s.request('PATCH', `/alerts/${a.id}`, { status: 'TRIAGED' })
    t.equal(ok.status, 200)
    t.equal(ok.body.status, 'TRIAGED')
    t.ok(ok.body.updatedAt >= a.updatedAt)
    for (const body of [{ status: 'DONE' }, { status: 'CLOSED', title: 'x' }, {}]) {
      const bad = await s.request('PATCH', `/alerts/${a.id}`, body)
      t.equal(bad.status, 400, JSON.stringify(body))
    }
    t.equal((await s.request('GET', `/alerts/${a.id}`)).body.status, 'TRIAGED', 'nothing changed by a 400')
    t.equal((await s.request('PATCH', '/alerts/nope', { status: 'CLOSED' })).status, 404)
    t.equal((await s.request('GET', '/alerts?status=TRIAGED')).body.results.length, 1)
  })

  await t.test('GET /alerts: newest first, pages, bad queries', async (t) => {
    const all = (await s.request('GET', '/alerts?limit=1000')).body.results as any[]
    t.ok(all.length >= 8)
    for (let i = 1; i < all.length; i++)
      t.ok(
        all[i - 1].createdAt > all[i].createdAt ||
          (all[i - 1].createdAt === all[i].createdAt && all[i - 1].id < all[i].id),
      )
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const page: any = await s.request('GET', `/alerts?limit=3${cursor ? `&cursor=${cursor}` : ''}`)
      t.ok(page.body.results.length <= 3)
      seen.push(...page.body.results.map((a: any) => a.id))
      cursor = page.body.next
    } while (cursor)
    t.same(
      seen,
      all.map((a) => a.id),
      'pages walk the whole list once',
    )
    t.equal((await s.request('GET', '/alerts?severity=low')).body.results.length, 1)
    t.equal((await s.request('GET', '/alerts?rule-id=T.Order,T.Dedup')).body.results.length, 4)
    t.equal(
      (await s.request('GET', `/alerts?created-after=${encodeURIComponent('2999-01-01T00:00:00Z')}`)).body.results
        .length,
      0,
    )
    for (const q of [
      'limit=0',
      'limit=1001',
      'cursor=zzz',
      'created-after=yesterday',
      'severity=BAD',
      'status=x',
      'foo=1',
    ])
      t.equal((await s.request('GET', `/alerts?${q}`)).status, 400, q)
    t.equal((await s.request('GET', '/alerts/nope')).status, 404)
  })

  await t.test('a restart resumes at the checkpoint: nothing evaluated twice', async (t) => {
    const before = (await s.request('GET', '/alerts?limit=1000')).body.results as any[]
    await s.close()
    s = await startInProcess({ dataDir, env })
    await s.server.detection.detector.idle()
    const after = (await s.request('GET', '/alerts?limit=1000')).body.results as any[]
    t.same(after, before)
    await send(s, [cmd('ord', '2026-11-20T10:30:00Z')])
    const order = byFirst(await alertsOf(s, 'T.Order'))
    t.equal(order[1].eventCount, 3, 'a later match joins the group kept across the restart')
    const status = await s.request('GET', '/status')
    t.equal(status.body.detection.lagSeconds, 0)
    t.ok(status.body.detection.checkpoint.records >= 1)
  })
})

t.test('rule errors are recorded and never block the other rules', async (t) => {
  const dataDir = tempDir('rk-detect-')
  const { simpleLive } = await import('../../src/engine/simple/live.js')
  // The same service, with the simple evaluator raising on one command name for one rule.
  const server = await startInProcess({
    dataDir,
    env,
    start: {
      detectionEngines: {
        simple: {
          live: (r, ctx) => {
            const inner = simpleLive(r, ctx)
            if (!('evaluate' in inner) || r.id !== 'T.Raises') return inner
            const evaluate = inner.evaluate
            return {
              evaluate: (ev: any) =>
                ev.team_command?.command_name === 'boom' ? { error: 'ValueError: boom' } : evaluate(ev),
            }
          },
        },
      },
    },
  })
  t.teardown(() => server.close())
  const req = (method: string, p: string, body?: unknown) => server.request(method, p, body)
  for (const id of ['T.Raises', 'T.Fine'])
    await req(
      'POST',
      '/simple-rules',
      SAMPLE_BODIES.simple(id, {
        logTypes: ['Editor.Audit'],
        detection: '- KeyPath: team_command.action\n  Condition: Equals\n  Value: create\n',
        tests: [],
      }),
    )
  const res = await postLog(server, ndjson([cmd('boom', '2026-11-20T10:00:00Z'), cmd('ok', '2026-11-20T10:01:00Z')]))
  t.equal(res.status, 200)
  await server.service.detection.detector.idle()
  const errs = await req('GET', '/rule-errors?rule-id=T.Raises')
  t.equal(errs.status, 200)
  t.equal(errs.body.results.length, 1)
  t.match(errs.body.results[0], {
    ruleId: 'T.Raises',
    revision: server.service.catalog.index.revision,
    error: 'ValueError: boom',
  })
  t.match(errs.body.results[0].record, { partition: /^Editor\.Audit\/dt=2026-11-20\/hour=10\//, offset: Number })
  const fine = await req('GET', '/alerts?rule-id=T.Fine')
  t.equal(fine.body.results[0].eventCount, 2, 'the other rule saw both records')
  const raises = await req('GET', '/alerts?rule-id=T.Raises')
  t.equal(raises.body.results[0].eventCount, 1, 'the failing rule still ran on the other record')
  const metrics = (await server.send('GET', '/metrics')).text
  // Counted without the rule's id (/metrics is unauthenticated); GET /rule-errors names it.
  t.match(metrics, /^rulekeeper_detection_rule_errors_total 1$/m)
  t.notMatch(metrics, /T\.Raises/)
})
