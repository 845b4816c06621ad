// Correlation schedules and scheduled queries on two replicas over one PostgreSQL
// (state/lease-singletons.ts): the same rules served by both, a test clock (schedule minutes of
// 20 ms, so RateMinutes 60 is a 1.2 s slot aligned to the epoch). Only the lease's holder runs a
// slot, each slot once; when the holder stops, the other takes the lease and runs the next slot:
// none skipped, none run twice.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import t, { type Test } from 'tap'
import { commandRule, DETECT_ENV } from '../detect/helpers.js'
import { gitAs, PAT } from '../helpers/git-as.js'
import { type InProcessServer, startInProcess } from '../helpers/in-process.js'
import { freshDatabase } from '../helpers/postgres.js'
import { SAMPLE_BODIES, tempDir, type TestServerOptions } from '../helpers/rulekeeper.js'
import { waitFor } from '../helpers/wait.js'

const SEQUENCE =
  '- Sequence:\n    - ID: Failures\n      RuleID: C.Fail\n      MinMatchCount: 3\n    - ID: Success\n      RuleID: C.Ok\n' +
  '  Transitions:\n    - ID: Failures FOLLOWED BY Success\n      From: Failures\n      To: Success\n      WithinTimeFrameMinutes: 30\n' +
  '      Match:\n        - On: p_alert_context.actor\n  LookbackWindowMinutes: 60\n  Schedule:\n    RateMinutes: 60\n    TimeoutMinutes: 5\n'
const ACTOR = '- KeyName: actor\n  KeyValue:\n    Key: user_email\n'
const MINUTE_MS = 20
const PERIOD = 60 * MINUTE_MS

async function runs(url: string, job = 'correlation:C.Seq'): Promise<Array<{ slot: number; holder: string }>> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    const { rows } = await c.query(
      'SELECT (extract(epoch FROM slot) * 1000)::bigint AS slot, holder FROM job_runs WHERE job = $1 ORDER BY slot',
      [job],
    )
    return rows.map((r) => ({ slot: Number(r.slot), holder: String(r.holder) }))
  } finally {
    await c.end()
  }
}

/**
 * Two replicas (`rk-a` started first, then `rk-b`) over a fresh database, on a clock that starts at
 * a slot boundary and that the test moves (`advance`); `stopA` closes a (its lease given back).
 */
async function twoReplicas(
  t: Test,
  schedule: (now: () => number) => Pick<TestServerOptions, 'correlationSchedule' | 'scheduledQueries'>,
) {
  const url = await freshDatabase()
  let clock = Math.floor(Date.parse('2026-11-20T10:30:00Z') / PERIOD) * PERIOD
  const start = (replica: string) => {
    const dataDir = tempDir(`rk-pg-single-${replica}-`)
    t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }))
    return startInProcess({
      dataDir,
      env: DETECT_ENV,
      config: { state: { postgres: { url }, replica } },
      ...schedule(() => clock),
    })
  }
  const a: InProcessServer = await start('rk-a')
  const b: InProcessServer = await start('rk-b')
  let aOpen = true
  t.teardown(async () => {
    if (aOpen) await a.close()
    await b.close()
  })
  return {
    url,
    a,
    b,
    /** Moves the clock one slot on. */
    advance: () => {
      clock += PERIOD
    },
    stopA: async () => {
      await a.close()
      aOpen = false
    },
  }
}

t.test('one replica runs each correlation slot; the other takes over when it stops', async (t) => {
  const { url, a, b, advance, stopA } = await twoReplicas(t, (now) => ({
    correlationSchedule: { now, minuteMs: MINUTE_MS, syncMs: 50 },
  }))
  // The same rules on both replicas (each serves its own repository here).
  for (const s of [a, b]) {
    await commandRule(s, 'C.Fail', 'cfail', { createAlert: false, alertContext: ACTOR })
    await commandRule(s, 'C.Ok', 'cok', { createAlert: false, alertContext: ACTOR })
    const res = await s.request('POST', '/correlation-rules', {
      ...SAMPLE_BODIES.correlation('C.Seq', { detection: SEQUENCE, tests: [] }),
    })
    t.equal(res.status, 200, 'the correlation rule is created')
  }
  const statusOf = async (s: InProcessServer) =>
    ((await s.request('GET', '/status')).body.detection.correlation.rules as any[]).find((r) => r.ruleId === 'C.Seq')
  const runsOf = async (s: InProcessServer) => (await statusOf(s))?.runs as number
  const holderA = await waitFor('the first slot run', async () => (await runs(url))[0]?.holder)
  t.match(holderA, /^rk-a\//, 'the replica started first holds the lease and runs the slot')
  // The job_runs row is written (claimed) before the run ends and its status counts it: wait for that.
  const runsA = await waitFor('its status', async () => {
    const n = await runsOf(a)
    return n >= 1 && n
  })
  t.equal(runsA, 1, 'the slot ran once')
  // The other replica schedules the rule too (once its revision is synced), but runs nothing.
  t.equal(
    await waitFor('the rule scheduled on the other replica', () => runsOf(b)),
    0,
    'the other replica does not run it',
  )
  // Nor when asked: a run there would write groups from a book the holder keeps, not it.
  const asked = await b.request('POST', '/correlation-rules/C.Seq/run')
  t.equal(asked.status, 409, asked.text)
  t.match(asked.body.message, /does not hold the schedules lease/)
  t.equal(await runsOf(b), 0)

  advance()
  await waitFor('the second slot run', async () => (await runs(url)).length === 2)
  // Several ticks of both replicas later, still two runs.
  await waitFor('ticks', async () => (await runsOf(a)) === 2 && (await runsOf(b)) === 0)

  // The holder stops (its lease given back); the other runs the next slots, and none again.
  await stopA()
  advance()
  await waitFor('the third slot, on the other replica', async () => (await runs(url)).length === 3)
  advance()
  await waitFor('the fourth slot', async () => (await runs(url)).length === 4)
  const all = await runs(url)
  t.same(
    all.map((r) => r.slot - all[0]!.slot),
    [0, PERIOD, 2 * PERIOD, 3 * PERIOD],
    'every slot once, none skipped',
  )
  t.same(
    all.map((r) => r.holder.split('/')[0]),
    ['rk-a', 'rk-a', 'rk-b', 'rk-b'],
  )
  // b's status once its run of the fourth slot has ended (claimed before it ends, counted after).
  const fourth = new Date(all[3]!.slot).toISOString()
  await waitFor("the fourth slot's run in b's status", async () => (await statusOf(b))?.lastRun?.evaluatedAt === fourth)
  t.equal(await runsOf(b), 2, 'the new holder ran only the slots after the last recorded one')
})

const QUERY = [
  'AnalysisType: scheduled_query',
  'QueryName: Test.One',
  'Enabled: true',
  'Query: SELECT 1 AS one',
  'Schedule:',
  '  RateMinutes: 60',
  '  TimeoutMinutes: 500',
  '',
].join('\n')

/** The scheduled rule Sched.One on the query Test.One (a file of the repository: committed and reconciled). */
async function addScheduledQuery(t: Test, s: InProcessServer, body: string) {
  const res = await s.request(
    'POST',
    '/scheduled-rules',
    SAMPLE_BODIES.scheduled('Sched.One', { scheduledQueries: ['Test.One'], body, tests: [] }),
  )
  t.equal(res.status, 200, 'the scheduled rule is created')
  const work = path.join(tempDir('rk-pg-sq-w-'), 'w')
  execFileSync('git', ['clone', '-q', s.gitdir, work])
  fs.mkdirSync(path.join(work, 'queries'), { recursive: true })
  fs.writeFileSync(path.join(work, 'queries', 'test_one.yml'), QUERY)
  gitAs(PAT, work, 'add', '-A')
  gitAs(PAT, work, 'commit', '-q', '-m', 'a scheduled query')
  gitAs(PAT, work, 'push', '-q', 'origin', 'HEAD:main')
  t.equal((await s.request('POST', '/reconcile')).status, 200)
}

t.test('one replica runs each scheduled query slot; the other takes over when it stops', async (t) => {
  const { url, a, b, advance, stopA } = await twoReplicas(t, (now) => ({
    scheduledQueries: { now, minuteMs: MINUTE_MS, tickMs: 20 },
  }))
  for (const s of [a, b]) await addScheduledQuery(t, s, 'def rule(event):\n    return False\n')
  const runsOf = async (s: InProcessServer) =>
    ((await s.request('GET', '/status')).body.scheduledQueries.queries as any[]).find((q) => q.name === 'Test.One')
      ?.runs as number
  const holder = await waitFor('the first slot run', async () => (await runs(url, 'query:Test.One'))[0]?.holder)
  t.match(holder, /^rk-a\//, 'the replica started first runs the slot')
  await waitFor('its status', async () => (await runsOf(a)) === 1)
  t.equal(await waitFor('the query scheduled on the other replica', () => runsOf(b)), 0, 'the other does not run it')
  await stopA()
  advance()
  await waitFor('the next slot, on the other replica', async () => (await runs(url, 'query:Test.One')).length === 2)
  await waitFor('its status', async () => (await runsOf(b)) === 1)
  const all = await runs(url, 'query:Test.One')
  t.same(
    all.map((r) => [r.slot - all[0]!.slot, r.holder.split('/')[0]]),
    [
      [0, 'rk-a'],
      [PERIOD, 'rk-b'],
    ],
    'each slot once, none skipped',
  )
})

// The groups a scheduled rule changes are decided in the alert book's memory: the replica that
// takes the lease over reads them again before its first run (detect/group-refresh.ts), so the
// group the last holder made goes on counting, its triage kept, and no second alert opens for the
// same dedup window.
t.test('after a hand-over the new holder goes on with the groups the last holder committed', async (t) => {
  const { a, b, advance, stopA } = await twoReplicas(t, (now) => ({
    scheduledQueries: { now, minuteMs: MINUTE_MS, tickMs: 20 },
  }))
  for (const s of [a, b]) await addScheduledQuery(t, s, 'def rule(event):\n    return True\n')
  const alerts = async (s: InProcessServer) =>
    (await s.request('GET', '/alerts?rule-id=Sched.One&limit=10')).body.results as Array<{
      id: string
      eventCount: number
      status: string
    }>
  const first = await waitFor("the first slot's alert", async () => (await alerts(a))[0])
  t.equal(first.eventCount, 1)
  const triaged = await b.request('PATCH', `/alerts/${first.id}`, { status: 'TRIAGED' })
  t.equal(triaged.status, 200, triaged.text)
  advance()
  await waitFor('the second slot counted', async () => (await alerts(a))[0]?.eventCount === 2)
  // b's book was read before a made the group: without reading it again b would open its own.
  await stopA()
  advance()
  const after = await waitFor('the third slot counted, on b', async () => {
    const list = await alerts(b)
    return list.some((x) => x.eventCount === 3) || list.length > 1 ? list : undefined
  })
  t.same(
    after.map((x) => [x.id, x.eventCount, x.status]),
    [[first.id, 3, 'TRIAGED']],
    'one alert, counted on, its triage kept',
  )
})
