// Replay within its permission (issue 27 finding 5): alert content — titles, dedup strings, alert
// contexts and the summaries of event values — is View Alerts'. A token with View Rules alone (and
// with Manage Rules: it can write a rule whose alert context is the whole record) gets counts per
// rule (matches, alerts, errors) and nothing of the records; with View Alerts too it gets the
// alerts. Real stored log, real Python rule in the sandbox, requests in process.
import t from 'tap'
import { REPLAY_DAY, writeStoredAudit } from '../detect/stored-records.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'
import { startInProcess } from '../helpers/in-process.js'

const MARKER = 'secret-marker'

t.test('View Rules gets counts; View Alerts gets the alerts', async (t) => {
  const dataDir = tempDir('rk-replay-perm-')
  // 40 records, 4 users; every record carries a marker that must not reach a View Rules token.
  await writeStoredAudit(dataDir, 40, {
    extra: (i) => ({ user_email: `${MARKER}-${i % 4}@example.com`, note: `${MARKER} note ${i}` }),
  })
  const s = await startInProcess({ dataDir })
  t.teardown(() => s.close())
  const simple = await s.request('POST', '/simple-rules', {
    ...SAMPLE_BODIES.simple('Rp.ByUser', {
      logTypes: ['Editor.Audit'],
      detection: '- KeyPath: p_log_type\n  Condition: Equals\n  Value: Editor.Audit\n',
      tests: [],
    }),
    enabled: false,
    groupBy: '- Key: user_email\n',
    summaryAttributes: ['note'],
  })
  t.equal(simple.status, 200, simple.text)
  // With Manage Rules a token can write this: the whole record as the alert context.
  const whole = await s.request('POST', '/rules', {
    ...SAMPLE_BODIES.python('Rp.Whole', {
      body: 'def rule(event):\n    return True\n\n\ndef alert_context(event):\n    return dict(event)\n',
      tests: [],
    }),
    enabled: false,
  })
  t.equal(whole.status, 200, whole.text)
  const body = { ...REPLAY_DAY, ruleIds: ['Rp.ByUser', 'Rp.Whole'] }

  const rulesOnly = await s.makeToken('rules-only', ['View Rules', 'Manage Rules'])
  const counts = await s.send('POST', '/replay', body, { 'X-API-Key': rulesOnly })
  t.equal(counts.status, 200, counts.text)
  t.equal(counts.body.records, 40)
  t.equal(counts.body.matches, 80)
  t.same(counts.body.rules, [
    { ruleId: 'Rp.ByUser', matches: 40, alerts: 4, errors: 0 },
    { ruleId: 'Rp.Whole', matches: 40, alerts: 4, errors: 0 }, // one per hour (a 60-minute dedup period)
  ])
  t.equal(counts.body.alertCount, 8)
  t.notOk('alerts' in counts.body, 'no alerts without View Alerts')
  t.notOk(counts.text.includes(MARKER), 'nothing of the records: no title, dedup, context or summary')

  const alertsToo = await s.makeToken('alerts-too', ['View Rules', 'View Alerts'])
  const full = await s.send('POST', '/replay', body, { 'X-API-Key': alertsToo })
  t.equal(full.status, 200, full.text)
  t.same(full.body.rules, counts.body.rules, 'the same counts')
  t.equal(full.body.alerts.length, 8)
  const byUser = full.body.alerts.filter((a: any) => a.ruleId === 'Rp.ByUser')
  t.same(
    byUser.map((a: any) => a.dedup).sort(),
    [0, 1, 2, 3].map((k) => JSON.stringify([`${MARKER}-${k}@example.com`])), // GroupBy's dedup: the keys' values as JSON
  )
  t.ok(
    byUser.every((a: any) => a.eventCount === 10 && a.summary.note.length === 5),
    'the events’ summary',
  )
  const ctx = full.body.alerts.find((a: any) => a.ruleId === 'Rp.Whole').alertContext
  t.match(ctx, { note: new RegExp(MARKER), p_log_type: 'Editor.Audit' }, 'the record as alert context')

  const alertsOnly = await s.makeToken('alerts-only', ['View Alerts'])
  const refused = await s.send('POST', '/replay', body, { 'X-API-Key': alertsOnly })
  t.equal(refused.status, 403, 'replay stays a View Rules route')
})
