// Scheduled queries on their schedule (docs/queries.md, "Scheduling"), through the real parts: a
// scheduled query pushed to the rules repository and scheduled rules created through the API, over
// events ingested by the real log source, run by the real DuckDB engine and the real python3
// sandbox, at a test clock (schedule minutes of 20 ms). A run raises an alert on its slot and
// through `POST /scheduled-queries/{name}/run`; a rule that raises is a rule error; a query past
// its TimeoutMinutes is interrupted and recorded (/status, rule errors); a restart on the same
// data directory does not run a slot again; the repository's example query and rule raise the
// example's alert from three admin grants within an hour, delivered to a destination.
// Real port: a remote (the receiver; the service runs in process).
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { Ajv } from 'ajv'
import t, { type Test } from 'tap'
import { DETECT_ENV, postLog } from '../detect/helpers.js'
import { gitAs, PAT } from '../helpers/git-as.js'
import { type InProcessServer, startInProcess } from '../helpers/in-process.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'
import { waitFor } from '../helpers/wait.js'
import { ndjson } from '../ingest/helpers.js'

const MINUTE_MS = 20
const at = (hhmm: string) => Date.parse(`2026-11-20T${hhmm}:00.000Z`)
let seq = 0
const grant = (actor: string, time: string, role = 'admin') => {
  const n = seq++
  return {
    user_email: actor,
    metadata: { id: `sq-grant-${n}`, timestamp: time },
    update_user_role: { old_role: 'member', new_role: role, user_email: `u${n}@example.com` },
  }
}

const GRANTS_QUERY = [
  'AnalysisType: scheduled_query',
  'QueryName: Test.Grants',
  'Enabled: true',
  'Query: |',
  '  SELECT user_email AS Actor, COUNT(*) AS Grants',
  '  FROM panther_logs.public.editor_audit',
  "  WHERE p_occurs_since('1 hour') AND update_user_role:new_role::string = 'admin'",
  '  GROUP BY 1',
  'Schedule:',
  '  RateMinutes: 5',
  // 500 schedule minutes of 20 ms: 10 s, never reached on a loaded machine
  '  TimeoutMinutes: 500',
  '',
].join('\n')

const SLOW_QUERY = [
  'AnalysisType: scheduled_query',
  'QueryName: Test.Slow',
  'Enabled: true',
  'Query: SELECT count(*) AS n FROM range(1000000) a, range(1000000) b',
  'Schedule:',
  '  RateMinutes: 5',
  '  TimeoutMinutes: 1',
  '',
].join('\n')

// Named by no rule: never scheduled, and a run of it is refused.
const ORPHAN_QUERY = [
  'AnalysisType: scheduled_query',
  'QueryName: Test.Orphan',
  'Enabled: true',
  'Query: SELECT 1 AS one',
  'Schedule:',
  '  RateMinutes: 5',
  '  TimeoutMinutes: 1',
  '',
].join('\n')

/** Commits files to the served repository by hand (queries are files, not API resources) and reconciles. */
async function push(s: InProcessServer, t: Test, files: Record<string, string>): Promise<void> {
  const work = path.join(tempDir('rk-sq-'), 'w')
  execFileSync('git', ['clone', '-q', s.gitdir, work])
  for (const [p, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(work, p)), { recursive: true })
    fs.writeFileSync(path.join(work, p), text)
  }
  gitAs(PAT, work, 'add', '-A')
  gitAs(PAT, work, 'commit', '-q', '-m', 'scheduled queries')
  gitAs(PAT, work, 'push', '-q', 'origin', 'HEAD:main')
  const rec = await s.request('POST', '/reconcile')
  t.equal(rec.status, 200, rec.text)
  t.same(rec.body.invalidFiles, [], 'the query files are valid')
}

/** The document's schema `name`, its references resolved (the schemas here are not recursive). */
function schemaOf(doc: any, name: string): unknown {
  const resolve = (v: any): any => {
    if (Array.isArray(v)) return v.map(resolve)
    if (!v || typeof v !== 'object') return v
    if (typeof v.$ref === 'string') return resolve(doc.components.schemas[v.$ref.split('/').pop()])
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolve(x)]))
  }
  return resolve(doc.components.schemas[name])
}

const queryStatus = async (s: InProcessServer, name: string) =>
  ((await s.request('GET', '/status')).body.scheduledQueries.queries as any[]).find((q) => q.name === name)

const alertsOf = async (s: InProcessServer, ruleId: string) =>
  (await s.request('GET', `/alerts?rule-id=${encodeURIComponent(ruleId)}&limit=100`)).body.results as any[]

const ruleErrorsOf = async (s: InProcessServer, ruleId: string) =>
  (await s.request('GET', `/rule-errors?rule-id=${encodeURIComponent(ruleId)}&limit=100`)).body.results as any[]

t.test(
  'a scheduled query feeds its scheduled rules on its slots, on demand, and once per slot across a restart',
  async (t) => {
    const dataDir = tempDir('rk-sq-data-')
    let clock = at('10:30')
    const start = () =>
      startInProcess({
        dataDir,
        env: DETECT_ENV,
        scheduledQueries: { now: () => clock, minuteMs: MINUTE_MS, tickMs: 20 },
      })
    let s = await start()
    t.teardown(() => s.close())

    const posted = await postLog(
      s,
      ndjson([
        grant('dana@example.com', '2026-11-20T10:05:00.000Z'),
        grant('dana@example.com', '2026-11-20T10:20:00.000Z'),
        grant('eli@example.com', '2026-11-20T10:15:00.000Z'),
        // before the hour: outside every window below
        grant('eli@example.com', '2026-11-20T09:00:00.000Z'),
      ]),
    )
    t.equal(posted.status, 200, JSON.stringify(posted.body))
    const rule = async (id: string, body: string, queries = ['Test.Grants']) => {
      const res = await s.request(
        'POST',
        '/scheduled-rules',
        SAMPLE_BODIES.scheduled(id, { scheduledQueries: queries, body, tests: [] }),
      )
      t.equal(res.status, 200, res.text)
    }
    await rule(
      'Sched.Grants',
      'def rule(event):\n    return event.get("grants", 0) >= 2\n\n\ndef title(event):\n    return f"{event.get(\'actor\')} granted admin {event.get(\'grants\')} times"\n\n\ndef alert_context(event):\n    return {"row": event}\n',
    )
    await rule('Sched.Broken', 'def rule(event):\n    return 1 / 0\n')
    await rule('Sched.Slow', 'def rule(event):\n    return True\n', ['Test.Slow'])
    await push(s, t, {
      'queries/test_grants.yml': GRANTS_QUERY,
      'queries/test_slow.yml': SLOW_QUERY,
      'queries/test_orphan.yml': ORPHAN_QUERY,
    })

    // The first slot runs once the query is served: dana's two grants make one alert.
    const first = await waitFor('the first run', async () => {
      const q = await queryStatus(s, 'Test.Grants')
      return q?.lastRun?.outcome === 'ok' && q
    })
    const slot1 = Math.floor(clock / (5 * MINUTE_MS)) * 5 * MINUTE_MS
    t.equal(first.lastSlot, new Date(slot1).toISOString(), 'the slot: the RateMinutes period the clock is in')
    t.match(first.lastRun, {
      trigger: 'schedule',
      slot: new Date(slot1).toISOString(),
      rows: 2,
      cut: false,
      rules: ['Sched.Broken', 'Sched.Grants'],
      matches: 1,
      alertsCreated: 1,
      ruleErrors: 2,
      outcome: 'ok',
      error: null,
    })
    t.same(first.schedule, { rateMinutes: 5, timeoutMinutes: 500 })
    let alerts = await alertsOf(s, 'Sched.Grants')
    t.equal(alerts.length, 1)
    t.match(alerts[0], { title: 'dana@example.com granted admin 2 times', severity: 'MEDIUM', eventCount: 1 })
    const context = (await s.request('GET', `/alerts/${alerts[0].id}`)).body.alertContext
    t.same(context, { row: { actor: 'dana@example.com', grants: 2 } }, 'the event is the row, keys lower-cased')
    const broken = await ruleErrorsOf(s, 'Sched.Broken')
    t.equal(broken.length, 2, 'a rule that raises: one rule error per row')
    t.match(broken[0].error, /Test.Grants.*ZeroDivisionError/)
    t.notOk(await queryStatus(s, 'Test.Orphan'), 'a query no rule names is not scheduled')

    // The slow query: interrupted at its TimeoutMinutes (1 schedule minute = 20 ms), recorded.
    const slow = await waitFor('the slow query stopped', async () => {
      const q = await queryStatus(s, 'Test.Slow')
      return q?.lastRun?.outcome === 'error' && q
    })
    t.match(slow.lastRun.error, /Test.Slow failed: .*time limit of 20 ms/)
    t.match(slow.lastError, { error: /time limit/ })
    t.equal(slow.errors, 1)
    const slowErrors = await ruleErrorsOf(s, 'Sched.Slow')
    t.equal(slowErrors.length, 1, 'a rule error of the rule naming it')
    t.match(slowErrors[0].error, /time limit of 20 ms/)

    // The next slot: the rate comes round when the clock enters the next period.
    clock += 5 * MINUTE_MS
    const second = await waitFor('the second slot', async () => {
      const q = await queryStatus(s, 'Test.Grants')
      return q?.runs === 2 && q
    })
    t.equal(second.lastSlot, new Date(slot1 + 5 * MINUTE_MS).toISOString())
    alerts = await alertsOf(s, 'Sched.Grants')
    t.equal(alerts.length, 1, 'the same dedup string within the dedup period: the same alert')
    t.equal(alerts[0].eventCount, 2, 'with the second run’s row')

    // On demand: 404, 409, 401, then a run now.
    t.equal((await s.request('POST', '/scheduled-queries/No.Such.Query/run')).status, 404)
    const orphan = await s.request('POST', '/scheduled-queries/Test.Orphan/run')
    t.equal(orphan.status, 409, orphan.text)
    t.match(orphan.body.message, /no enabled scheduled rule names/)
    t.equal((await s.send('POST', '/scheduled-queries/Test.Grants/run')).status, 401)
    const viewer = await s.makeToken('viewer', ['View Rules'])
    t.equal(
      (await s.send('POST', '/scheduled-queries/Test.Grants/run', undefined, { 'X-API-Key': viewer })).status,
      403,
    )
    const now = await s.request('POST', '/scheduled-queries/Test.Grants/run')
    t.equal(now.status, 200, now.text)
    t.match(now.body, {
      query: 'Test.Grants',
      trigger: 'manual',
      slot: new Date(clock).toISOString(),
      rows: 2,
      matches: 1,
      alertsCreated: [],
      alertsUpdated: [alerts[0].id],
      ruleErrors: 2,
      outcome: 'ok',
      error: null,
    })
    t.equal((await alertsOf(s, 'Sched.Grants'))[0].eventCount, 3)
    // The answer and /status as the OpenAPI document describes them.
    const doc = (await s.send('GET', '/openapi.json')).body
    const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false })
    const runSchema = ajv.compile(schemaOf(doc, 'ScheduledQueryRun') as object)
    t.ok(runSchema(now.body), 'the run answer is a ScheduledQueryRun', { errors: runSchema.errors })
    const statusSchema = ajv.compile(schemaOf(doc, 'Status') as object)
    const status = (await s.request('GET', '/status')).body
    t.ok(statusSchema(status), '/status with scheduledQueries is a Status', { errors: statusSchema.errors })
    t.notOk(
      statusSchema({
        ...status,
        scheduledQueries: { queries: [{ ...status.scheduledQueries.queries[0], runs: 'two' }] },
      }),
      'the document describes the section (a wrong type is refused)',
    )
    t.ok(doc.paths['/scheduled-queries/{name}/run']?.post, 'the route is in the document')
    t.equal((await queryStatus(s, 'Test.Grants')).lastSlot, second.lastSlot, 'a manual run records no slot')
    const metrics = (await s.send('GET', '/metrics')).text
    t.match(metrics, /rulekeeper_scheduled_query_runs_total\{outcome="ok"\} [1-9]/)
    t.match(metrics, /rulekeeper_scheduled_query_runs_total\{outcome="error"\} [1-9]/)

    // A restart at the same clock: the slot already run is not run again; the next one is, once.
    await s.close()
    s = await start()
    const restarted = await queryStatus(s, 'Test.Grants')
    t.equal(restarted.lastSlot, second.lastSlot, 'the last slot survived the restart')
    clock += 5 * MINUTE_MS
    const third = await waitFor('the slot after the restart', async () => {
      const q = await queryStatus(s, 'Test.Grants')
      return q?.runs >= 1 && q
    })
    t.equal(third.runs, 1, 'one run since the restart: the slot run before it was not repeated')
    t.equal(third.lastRun.slot, new Date(slot1 + 10 * MINUTE_MS).toISOString())
    t.equal((await alertsOf(s, 'Sched.Grants'))[0].eventCount, 4, 'one more event, not two')
  },
)

t.test(
  'the example query and scheduled rule raise the example alert from three admin grants within an hour',
  async (t) => {
    const rx: Receiver = await startReceiver()
    t.teardown(() => rx.close())
    // 09:00 is a slot of RateMinutes 60 at 20 ms a minute (a multiple of 1.2 s).
    let clock = at('08:59')
    const s = await startInProcess({
      env: DETECT_ENV,
      config: { destinations: [{ id: 'medium', type: 'webhook', url: rx.url, severities: ['MEDIUM'] }] },
      scheduledQueries: { now: () => clock, minuteMs: MINUTE_MS, tickMs: 20 },
    })
    t.teardown(() => s.close())
    const name = 'Editor.Audit.AdminGrants.Hourly'
    // Served from the repository template unchanged; its slot at start ran over no events.
    await waitFor('the run at start', async () => (await queryStatus(s, name))?.runs === 1)
    const posted = await postLog(
      s,
      ndjson([
        grant('dana@example.com', '2026-11-20T08:05:00.000Z'),
        grant('dana@example.com', '2026-11-20T08:20:00.000Z'),
        grant('dana@example.com', '2026-11-20T08:50:00.000Z'),
        // eli: two grants, under the example rule's threshold of three
        grant('eli@example.com', '2026-11-20T08:30:00.000Z'),
        grant('eli@example.com', '2026-11-20T08:40:00.000Z'),
      ]),
    )
    t.equal(posted.status, 200, JSON.stringify(posted.body))
    clock = at('09:00')
    const q = await waitFor('the 09:00 slot', async () => {
      const st = await queryStatus(s, name)
      return st?.runs === 2 && st
    })
    t.match(q.lastRun, { slot: '2026-11-20T09:00:00.000Z', rows: 2, matches: 1, alertsCreated: 1, outcome: 'ok' })
    const alerts = await alertsOf(s, 'Editor.Audit.AdminGrantsBurst')
    t.equal(alerts.length, 1, 'dana only: eli’s two grants are under the threshold')
    t.match(alerts[0], {
      title: 'dana@example.com granted admin to 3 people within an hour',
      severity: 'MEDIUM',
      ruleId: 'Editor.Audit.AdminGrantsBurst',
    })
    await rx.until(() => rx.got.length >= 1, 'the alert delivered')
    t.equal(JSON.parse(rx.got[0]!.body).id, alerts[0].id, 'routed to the destination like any alert')
  },
)
