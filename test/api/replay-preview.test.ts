// POST /replay/preview and POST /test-runs (issue 32): an unsaved rule replayed over stored records
// gives what a replay of the same rule, once saved, gives (counts and alerts), each alert with its
// first events; bad input is a 400 with a message (the rule's problems under /rule), the replay caps
// hold, the permissions are a replay's plus Manage Rules (unsaved code runs). A test run answers
// every test's result and the functions' outputs, pass or fail, one test alone when named.
// Real stored log, real Python rules in the sandbox, requests in process.
import t from 'tap'
import { REPLAY_DAY, writeStoredAudit } from '../detect/stored-records.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'
import { startInProcess } from '../helpers/in-process.js'

const SAVED = 'def rule(event):\n    return False\n'
const EDITED =
  'def rule(event):\n    return event.get("user_email", "").startswith(("user1@", "user2@", "user3@"))\n\n\ndef title(event):\n    return "seen " + event.get("user_email")\n\n\ndef dedup(event):\n    return event.get("user_email")\n'

t.test('a preview of an unsaved change is the replay of it saved', async (t) => {
  const dataDir = tempDir('rk-preview-')
  await writeStoredAudit(dataDir, 400)
  const s = await startInProcess({ dataDir, config: { detection: { replay: { maxBytes: 1024 * 1024 } } } })
  t.teardown(() => s.close())
  const saved = await s.request('POST', '/rules', {
    ...SAMPLE_BODIES.python('Pv.Users', { body: SAVED, tests: [] }),
    enabled: false,
  })
  t.equal(saved.status, 200, saved.text)
  const all = await s.makeToken('all', ['View Rules', 'Manage Rules', 'View Alerts'])
  const as = (token: string) => ({ 'X-API-Key': token })
  const edited = { ...saved.body, body: EDITED }
  const preview = await s.send('POST', '/replay/preview', { kind: 'rules', rule: edited, ...REPLAY_DAY }, as(all))
  t.equal(preview.status, 200, preview.text)
  t.equal(preview.body.records, 400)
  // users 1, 2 and 3 (ids mod 200): 2 records each, in one hour
  t.same(preview.body.rules, [{ ruleId: 'Pv.Users', matches: 6, alerts: 3, errors: 0 }])
  t.equal(preview.body.alerts.length, 3)
  const first = preview.body.alerts[0]
  t.match(first.title, /^seen user\d+@example.com$/)
  t.equal(first.sampleEvents.length, 2, "the alert's events (at most 5)")
  t.ok(
    first.sampleEvents.every((e: any) => `seen ${e.user_email}` === first.title && e.p_log_type === 'Editor.Audit'),
    'the events of that alert',
  )
  const still = await s.request('GET', '/rules/Pv.Users')
  t.equal(still.body.body, SAVED, 'nothing was saved')

  // The same rule saved: its replay gives the same counts and alerts.
  const put = await s.request('PUT', '/rules/Pv.Users', edited)
  t.equal(put.status, 200, put.text)
  const replay = await s.send('POST', '/replay', { ...REPLAY_DAY, ruleIds: ['Pv.Users'] }, as(all))
  t.equal(replay.status, 200, replay.text)
  t.same(replay.body.rules, preview.body.rules)
  const key = (a: any) => [a.id, a.title, a.dedup, a.eventCount, a.firstEventTime, a.lastEventTime].join('|')
  t.same(replay.body.alerts.map(key), preview.body.alerts.map(key), 'the same alerts')
  t.notOk('sampleEvents' in replay.body.alerts[0], 'a plain replay keeps no events')

  // Without View Alerts: counts only, as a replay.
  const noAlerts = await s.makeToken('no-alerts', ['View Rules', 'Manage Rules'])
  const counts = await s.send('POST', '/replay/preview', { kind: 'python', rule: edited, ...REPLAY_DAY }, as(noAlerts))
  t.equal(counts.status, 200, counts.text)
  t.same(counts.body.rules, preview.body.rules, 'the kind by its name works too')
  t.notOk('alerts' in counts.body)
  t.notOk(counts.text.includes('@example.com'), 'nothing of the records')
  // View Rules alone may replay saved rules, not run unsaved code.
  const viewOnly = await s.makeToken('view-only', ['View Rules', 'View Alerts'])
  const refused = await s.send('POST', '/replay/preview', { kind: 'rules', rule: edited, ...REPLAY_DAY }, as(viewOnly))
  t.equal(refused.status, 403)
  t.match(refused.body.message, /Manage Rules/)
  const noView = await s.makeToken('manage-only', ['Manage Rules'])
  t.equal(
    (await s.send('POST', '/replay/preview', { kind: 'rules', rule: edited, ...REPLAY_DAY }, as(noView))).status,
    403,
  )

  // Bad input: a 400 with a message, nothing run.
  const bad = async (body: unknown, message: RegExp, path?: string) => {
    const r = await s.send('POST', '/replay/preview', body, as(all))
    t.equal(r.status, 400, `${JSON.stringify(body).slice(0, 80)} → 400`)
    t.match(r.body.message, message)
    if (path)
      t.ok(
        r.body.errors.some((e: any) => e.path === path),
        `${path}: ${JSON.stringify(r.body.errors)}`,
      )
  }
  await bad([1], /JSON object/)
  await bad({ kind: 'rules', rule: edited, ...REPLAY_DAY, ruleIds: ['x'] }, /invalid/, '/ruleIds')
  await bad({ kind: 'nope', rule: edited, ...REPLAY_DAY }, /invalid/, '/kind')
  await bad({ kind: 'rules', rule: 'def rule(e): return True', ...REPLAY_DAY }, /invalid/, '/rule')
  await bad({ kind: 'rules', rule: edited, from: 'yesterday', to: REPLAY_DAY.to }, /invalid/, '/from')
  await bad({ kind: 'rules', rule: edited, from: REPLAY_DAY.to, to: REPLAY_DAY.from }, /invalid/, '/to')
  await bad(
    { kind: 'rules', rule: { ...edited, body: 'def rule(event):\n    return (\n' }, ...REPLAY_DAY },
    /not valid/,
    '/rule/body',
  )
  await bad({ kind: 'rules', rule: { ...edited, severity: 'LOUD' }, ...REPLAY_DAY }, /not valid/, '/rule/severity')
  const corr = await s.send(
    'POST',
    '/replay/preview',
    {
      kind: 'correlation-rules',
      rule: { id: 'Pv.Corr', severity: 'LOW', detection: '- Sequence:\n    - ID: a\n      RuleID: Pv.Users\n' },
      ...REPLAY_DAY,
    },
    as(all),
  )
  t.equal(corr.status, 400, 'a kind detection does not replay over stored events')
})

t.test('the byte cap and the content cap hold for a preview', async (t) => {
  const dataDir = tempDir('rk-preview-caps-')
  await writeStoredAudit(dataDir, 400)
  const s = await startInProcess({
    dataDir,
    config: { detection: { replay: { maxBytes: 60_000, maxContentBytes: 8192 } } },
  })
  t.teardown(() => s.close())
  const rule = {
    ...SAMPLE_BODIES.python('Pv.All', { body: 'def rule(event):\n    return True\n', tests: [] }),
    enabled: false,
  }
  const day = await s.request('POST', '/replay/preview', { kind: 'rules', rule, ...REPLAY_DAY })
  t.equal(day.status, 400, day.text)
  t.match(day.body.message, /more than a replay may read \(0\.1 MiB\): narrow the range/)
  const hour = await s.request('POST', '/replay/preview', {
    kind: 'rules',
    rule: {
      ...rule,
      body: 'def rule(event):\n    return True\n\n\ndef dedup(event):\n    return event.get("p_row_id")\n',
    },
    from: '2026-11-20T00:00:00Z',
    to: '2026-11-20T01:00:00Z',
  })
  t.equal(hour.status, 400, 'the sample events count against maxContentBytes')
  t.match(hour.body.message, /maxContentBytes/)
  const few = await s.request('POST', '/replay/preview', {
    kind: 'rules',
    rule,
    from: '2026-11-20T00:00:00Z',
    to: '2026-11-20T01:00:00Z',
  })
  t.equal(few.status, 200, few.text)
  t.equal(few.body.alerts.length, 1)
  t.equal(few.body.alerts[0].eventCount, 100)
  t.equal(few.body.alerts[0].sampleEvents.length, 5, 'five events kept of an alert of 100')
})

t.test('POST /test-runs: each test’s result and outputs, one test alone', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const rule = SAMPLE_BODIES.python('Tr.Rule', {
    tests: [
      { name: 'a deletion', expectedResult: true, log: { action: 'delete', user: 'kim' } },
      { name: 'wrong', expectedResult: true, log: { action: 'create', user: 'kim' } },
    ],
  })
  const all = await s.request('POST', '/test-runs', { kind: 'rules', rule })
  t.equal(all.status, 200, all.text)
  t.equal(all.body.passed, false)
  t.equal(all.body.testResults.length, 2)
  const one = await s.request('POST', '/test-runs', { kind: 'rules', rule, tests: ['a deletion'] })
  t.equal(one.status, 200, one.text)
  t.equal(one.body.passed, true)
  t.equal(one.body.testResults.length, 1)
  t.match(one.body.testResults[0], {
    name: 'a deletion',
    passed: true,
    functions: { title: { output: 'deleted by kim' } },
  })
  const wrong = await s.request('POST', '/test-runs', { kind: 'rules', rule, tests: ['wrong'] })
  t.match(wrong.body, { passed: false, testResults: [{ name: 'wrong', passed: false }] })
  t.equal((await s.request('GET', '/rules/Tr.Rule')).status, 404, 'nothing saved')

  const bad = async (body: unknown, status: number, message: RegExp) => {
    const r = await s.request('POST', '/test-runs', body)
    t.equal(r.status, status, r.text)
    t.match([r.body.message, ...(r.body.errors ?? []).map((e: any) => `${e.path}: ${e.message}`)].join(' '), message)
  }
  await bad(['x'], 400, /JSON object/)
  await bad({ kind: 'rules', rule, tests: ['nope'] }, 400, /no test named "nope"/)
  await bad({ kind: 'rules', rule, tests: 'a deletion' }, 400, /list of test names/)
  await bad({ kind: 'rules', rule: { ...rule, tests: [] } }, 400, /no test to run/)
  await bad({ kind: 'rulez', rule }, 400, /kind must be/)
  await bad({ kind: 'rules', rule: { ...rule, body: 'def rule(:\n' } }, 400, /\/rule\/body/)
  await bad({ kind: 'rules', rule, extra: 1 }, 400, /extra is not a test-run field/)
  const viewOnly = await s.makeToken('view', ['View Rules'])
  const r = await s.send('POST', '/test-runs', { kind: 'rules', rule }, { 'X-API-Key': viewOnly })
  t.equal(r.status, 403, 'a test run is Manage Rules’, as run-tests-only')
})
