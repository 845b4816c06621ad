// GET /rule-health, in process, over real ingest and detection: a simple rule's alert (last alert,
// alerts in the last 24 hours), a Python rule raising in the sandbox (its latest error, first line),
// a correlation rule's last and next run (its scheduler), a scheduled rule's next run (the scheduled
// query it names, as /status has it; both schedulers at a fixed test clock, the query's one run at
// start waited for, so no run lands between the reads compared); rule id order, `rule-id`, cursor
// pages, 400s, View Rules, and the OpenAPI document.
import t from 'tap'
import { commandRecord, commandRule, DETECT_ENV, sendAndDetect } from '../detect/helpers.js'
import { startInProcess } from '../helpers/in-process.js'
import { SAMPLE_BODIES } from '../helpers/rulekeeper.js'
import { waitFor } from '../helpers/wait.js'
import { messageHead } from '../../src/service/rule-health.js'

const RAISES = `def rule(event):
    if event.deep_get("team_command", "command_name") == "hboom":
        raise ValueError("boom for " + str(event.get("user_email")) + "\\nsecond line")
    return False
`
const SEQUENCE =
  '- Sequence:\n    - ID: A\n      RuleID: H.Alerts\n    - ID: B\n      RuleID: H.Raises\n' +
  '  Transitions:\n    - ID: A FOLLOWED BY B\n      From: A\n      To: B\n      WithinTimeFrameMinutes: 30\n' +
  '  LookbackWindowMinutes: 60\n  Schedule:\n    RateMinutes: 60\n    TimeoutMinutes: 5\n'

t.test('GET /rule-health', async (t) => {
  const clock = Date.parse('2026-11-20T09:00:00Z')
  const s = await startInProcess({
    env: DETECT_ENV,
    correlationSchedule: { now: () => clock, syncMs: 20 },
    // The clock stands still: the query's slot at start is its only run (none at a real hour's turn).
    scheduledQueries: { now: () => clock, tickMs: 20 },
  })
  t.teardown(() => s.close())
  await commandRule(s, 'H.Alerts', 'halert')
  const py = await s.request('POST', '/rules', SAMPLE_BODIES.python('H.Raises', { body: RAISES, tests: [] }))
  t.equal(py.status, 200, py.text)
  const corr = await s.request('POST', '/correlation-rules', {
    ...SAMPLE_BODIES.correlation('H.Corr', { detection: SEQUENCE, tests: [] }),
  })
  t.equal(corr.status, 200, corr.text)
  const sched = await s.request('POST', '/scheduled-rules', SAMPLE_BODIES.scheduled('H.Sched'))
  t.equal(sched.status, 200, sched.text)
  await commandRule(s, 'H.Quiet', 'hquiet')

  const before = new Date().toISOString()
  await sendAndDetect(s, [
    commandRecord('h', 'halert', '2026-11-20T10:00:00Z', { user_email: 'a@example.com' }),
    commandRecord('h', 'hboom', '2026-11-20T10:01:00Z', { user_email: 'b@example.com' }),
  ])
  // The schedule runs a new correlation rule at once.
  const until = Date.now() + 10_000
  const corrHealth = async () => (await s.request('GET', '/rule-health?rule-id=H.Corr')).body.results[0]
  while ((await corrHealth()).lastRunAt === null) {
    if (Date.now() > until) throw new Error('the schedule did not run the correlation rule')
    await new Promise((r) => setTimeout(r, 20)) // wait: poll interval of a wait on a condition
  }

  // The scheduled query runs its slot at start once H.Sched names it: read after that run.
  const QUERY = 'Editor.Audit.AdminGrants.Hourly'
  const queryRuns = async () =>
    ((await s.request('GET', '/status')).body.scheduledQueries.queries as Array<{ name: string; runs: number }>).find(
      (q) => q.name === QUERY,
    )?.runs
  await waitFor('the scheduled query run at start', async () => (await queryRuns()) === 1)

  const r = await s.request('GET', '/rule-health?rule-id=H.Sched,H.Raises,H.Alerts,H.Corr,H.Quiet&rule-id=H.Nope')
  t.equal(r.status, 200, r.text)
  t.same(
    r.body.results.map((h: { ruleId: string }) => h.ruleId),
    ['H.Alerts', 'H.Corr', 'H.Quiet', 'H.Raises', 'H.Sched'],
    'rule id order; an id no rule has is left out',
  )
  t.equal(r.body.next, null)
  const by = Object.fromEntries(r.body.results.map((h: { ruleId: string }) => [h.ruleId, h]))
  const alert = (await s.request('GET', '/alerts?rule-id=H.Alerts')).body.results[0]
  t.ok(alert.createdAt >= before)
  t.same(by['H.Alerts'], {
    ruleId: 'H.Alerts',
    kind: 'simple',
    enabled: true,
    lastAlertAt: alert.createdAt,
    alertsLast24h: 1,
    lastError: null,
    lastRunAt: null,
    nextRunAt: null,
  })
  t.match(by['H.Raises'], {
    kind: 'python',
    lastAlertAt: null,
    alertsLast24h: 0,
    lastError: { time: String, message: /ValueError: boom for b@example.com/ },
  })
  t.notMatch(by['H.Raises'].lastError.message, /\n/, 'the first line only')
  const groups = (await s.request('GET', '/rule-errors/groups?rule-id=H.Raises')).body.results
  t.equal(by['H.Raises'].lastError.time, groups[0].lastTime, 'the latest error, as /rule-errors/groups has it')
  const status = (await s.request('GET', '/status')).body
  const corrStatus = status.detection.correlation.rules.find((x: { ruleId: string }) => x.ruleId === 'H.Corr')
  t.match(by['H.Corr'], {
    kind: 'correlation',
    lastRunAt: corrStatus.lastRun.evaluatedAt,
    nextRunAt: corrStatus.nextRunAt,
  })
  t.equal(by['H.Corr'].lastRunAt, '2026-11-20T09:00:00.000Z', 'the scheduler’s clock')
  t.type(by['H.Corr'].nextRunAt, 'string')
  const query = status.scheduledQueries.queries.find((q: { name: string }) => q.name === QUERY)
  t.ok(query, 'the scheduled query of the template')
  t.equal(query.runs, 1, 'no other run between the reads')
  t.match(by['H.Sched'], {
    kind: 'scheduled',
    nextRunAt: query.nextSlotAt,
    lastRunAt: query.lastRun?.startedAt ?? query.lastSlot,
  })
  t.type(by['H.Sched'].nextRunAt, 'string', 'the query is scheduled')
  t.equal(by['H.Quiet'].lastError, null)

  t.test('every rule in cursor pages; bad input; permission; OpenAPI', async (t) => {
    const all: string[] = []
    let cursor: string | null = ''
    let pages = 0
    while (cursor !== null) {
      const p = await s.request('GET', `/rule-health?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
      t.equal(p.status, 200, p.text)
      t.ok(p.body.results.length <= 2)
      all.push(...p.body.results.map((h: { ruleId: string }) => h.ruleId))
      cursor = p.body.next
      pages++
    }
    t.ok(pages > 2, `${pages} pages`)
    t.same(all, [...all].sort(), 'in id order')
    t.equal(new Set(all).size, all.length, 'no rule twice')
    for (const id of ['H.Alerts', 'H.Corr', 'H.Quiet', 'H.Raises', 'H.Sched']) t.ok(all.includes(id), id)
    for (const bad of ['limit=0', 'limit=1001', 'cursor=nope', 'since=2026-01-01T00:00:00Z', 'rule-id='])
      t.equal((await s.request('GET', `/rule-health?${bad}`)).status, 400, bad)
    const alertsOnly = await s.makeToken('alerts-only', ['View Alerts'])
    t.equal((await s.send('GET', '/rule-health', undefined, { 'X-API-Key': alertsOnly })).status, 403)
    const viewer = await s.makeToken('viewer', ['View Rules'])
    t.equal((await s.send('GET', '/rule-health', undefined, { 'X-API-Key': viewer })).status, 200)
    const doc = (await s.send('GET', '/openapi.json')).body
    t.ok(doc.paths['/rule-health']?.get, 'documented')
    t.ok(doc.components.schemas.RuleHealth, 'its schema')
  })
})

t.test('the message head: the first line, at most 200 characters', async (t) => {
  t.equal(messageHead('one\ntwo'), 'one')
  const long = messageHead('x'.repeat(500))
  t.equal(long.length, 200)
  t.ok(long.endsWith('…'))
  t.equal(messageHead('y'.repeat(200)), 'y'.repeat(200))
})
