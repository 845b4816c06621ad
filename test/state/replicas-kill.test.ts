// Three replicas SIGKILLed under load (issue 30): three child `rulekeeper serve` processes (rk-a,
// rk-b, rk-c: their own data directories, one PostgreSQL, one smart-HTTP Git remote holding the
// rules, one shared events directory) take records posted round-robin to the live ones, while a
// receiver fails a seeded fifth of the deliveries (500, or no answer within the 1 s timeout). At
// seeded random moments (>= 10) one live replica (a third of the time the schedules lease's holder)
// is SIGKILLed and started again with the same `state.replica` and data directory. Then: every
// acknowledged record is stored once (un-acknowledged ones at most once); every alert group exists
// once per rule, dedup string and window, counting each stored record once, an alert exactly when
// it reached the threshold; every alert is delivered (2xx) at least once, each request with the
// alert's id as its Idempotency-Key, and the outbox shows it delivered; the correlation rule's
// schedule slots (a 6 s test slot, a 2 s lease) ran each once, none skipped, up to the end.
// The seed is RULEKEEPER_SEED (printed), the number of kills RULEKEEPER_REPLICA_KILLS (at least 10).
// Real port: a crash (SIGKILL of child servers) and a remote (the Git remote and the receiver).
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import t from 'tap'
import { alertId } from '../../src/detect/grouping.js'
import { type ChildServer, startChild } from '../helpers/child-server.js'
import { createGitHttpServer, createRemoteRepo } from '../helpers/git-http-server.js'
import { freshDatabase } from '../helpers/postgres.js'
import { startReceiver } from '../helpers/receiver.js'
import { tempDir } from '../helpers/rulekeeper.js'
import { SeededRandom } from '../helpers/seeded-random.js'
import { sleep, waitFor } from '../helpers/wait.js'
import { makeRecord, ndjson, post, TOKEN as SOURCE_TOKEN } from '../ingest/helpers.js'

const SEED = Number(process.env.RULEKEEPER_SEED ?? 3030)
const KILLS = Math.max(10, Number(process.env.RULEKEEPER_REPLICA_KILLS ?? 12))
const REPLICAS = ['rk-a', 'rk-b', 'rk-c'] as const
const API_TOKEN = 'rk-replicas-kill-bootstrap-token-0123456789'
const TEMPLATE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../rules-repo-template')

// The simple rule: one group per user and event hour block, an alert from the fifth record on.
const RULE = 'Kill.Count'
const THRESHOLD = 5
const RULE_FILE = `AnalysisType: rule
RuleID: ${RULE}
DisplayName: Kill suite commands
Enabled: true
LogTypes:
  - Editor.Audit
Severity: High
Threshold: ${THRESHOLD}
DedupPeriodMinutes: 60
Detection:
  - KeyPath: team_command.command_name
    Condition: Equals
    Value: killsuite
GroupBy:
  - Key: user_email
Tests: []
`
// The template's correlation rule runs every RateMinutes 60: with a schedule minute of 100 ms, a
// 6 s slot aligned to the epoch; the lease's time to live of 2 s lets a survivor take over within a slot.
const CORRELATION = 'Editor.Audit.BruteForceThenSuccess'
const MINUTE_MS = 100
const PERIOD = 60 * MINUTE_MS
const LEASE_TTL_MS = 2000

// The load: batches of 10 to 50 records, two senders each pausing between its requests, records
// spread over 40 users (and now and then one of 20 rare users, whose groups stay below the
// threshold), the event time the same for every 300 records and two hours later for the next 300:
// each user's window closes and the next opens all through the load, so alerts are made (and
// deliveries queued) while replicas are killed, and some groups stay below the threshold.
const SENDERS = 2
const PAUSE_MS = 500
const MAX_RECORDS = 8000
const USERS = 40
const RARE = 20
const BASE = Date.parse('2026-01-05T07:00:00Z')
const WINDOW_RECORDS = 300
const windowOf = (n: number) => BASE + Math.floor(n / WINDOW_RECORDS) * 2 * 3_600_000

interface Sent {
  n: number
  email: string
  eventMs: number
}

function record(s: Sent) {
  const r = makeRecord(`kill-${s.n}`, new Date(s.eventMs).toISOString(), { user_email: s.email }) as Record<
    string,
    unknown
  >
  delete r.login
  r.team_command = { action: 'create', command_id: 'c1', command_name: 'killsuite', is_active: true }
  return r
}

/** Every line of every data file of the shared events directory (every replica's folder). */
function storedLines(eventsDir: string): Array<{ file: string; text: string }> {
  const out: Array<{ file: string; text: string }> = []
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name)
      if (e.isDirectory()) {
        if (e.name !== '_rejected') walk(p)
      } else if (e.name.endsWith('.ndjson'))
        for (const text of fs.readFileSync(p, 'utf8').split('\n'))
          if (text !== '') out.push({ file: path.relative(eventsDir, p), text })
    }
  }
  walk(eventsDir)
  return out
}

t.test(`three replicas over one PostgreSQL survive ${KILLS} SIGKILLs under load`, async (t) => {
  t.setTimeout(300_000)
  const started = Date.now()
  t.comment(`seed ${SEED}, ${KILLS} kills`)
  const loadRand = new SeededRandom(SEED)
  const killRand = new SeededRandom(SEED + 1)
  const rxRand = new SeededRandom(SEED + 2)

  // The Git remote: the template's rules (not the scheduled ones: no query engine run) and Kill.Count.
  // The replicas: the live child of each (none while it is down or starting again); killed before
  // their directories are removed.
  const live = new Map<string, ChildServer>()
  const root = tempDir('rk-kill-')
  t.teardown(async () => {
    for (const c of live.values()) await c.kill()
    fs.rmSync(root, { recursive: true, force: true })
  })
  const rules = path.join(root, 'rules-src')
  fs.cpSync(TEMPLATE, rules, { recursive: true })
  for (const dir of ['scheduled_rules', 'queries', 'global_helpers'])
    fs.rmSync(path.join(rules, dir), { recursive: true, force: true })
  fs.mkdirSync(path.join(rules, 'simple_rules', 'kill'), { recursive: true })
  fs.writeFileSync(path.join(rules, 'simple_rules', 'kill', `${RULE}.yml`), RULE_FILE)
  const gitRoot = path.join(root, 'remote')
  fs.mkdirSync(gitRoot)
  const git = await createGitHttpServer({ root: gitRoot })
  t.teardown(() => git.stop())
  await createRemoteRepo(gitRoot, 'rules', rules)

  // The receiver: a seeded fifth of the requests fail: 500, or (one in 20) never answered, so the
  // sender's 1 s timeout fails it and a delivery is in flight, claimed, when its replica is killed.
  const rx = await startReceiver(() => {
    const x = rxRand.next()
    return x < 0.15 ? { status: 500 } : x < 0.2 ? 'hang' : { status: 200 }
  })
  t.teardown(() => rx.close())

  const url = await freshDatabase()
  const db = new pg.Client({ connectionString: url })
  await db.connect()
  t.teardown(() => db.end())

  const eventsDir = path.join(root, 'events')
  const env = (replica: string) => {
    const configFile = path.join(root, `config-${replica}.json`)
    fs.writeFileSync(
      configFile,
      JSON.stringify({
        state: { postgres: { url }, replica, eventsDir, leaseTtlMs: LEASE_TTL_MS },
        destinations: [{ id: 'rx', type: 'webhook', url: rx.url, severities: ['HIGH'] }],
        delivery: { attempts: 1000, firstDelayMs: 20, maxDelayMs: 400, budgetMinutes: 60, timeoutMs: 1000 },
        detection: { alertsPerRuleHour: 1_000_000 },
      }),
    )
    return {
      RULEKEEPER_CONFIG: configFile,
      RULEKEEPER_GIT_URL: git.url('rules'),
      RULEKEEPER_GIT_BRANCH: 'main',
      RULEKEEPER_BOOTSTRAP_TOKEN: API_TOKEN,
      RULEKEEPER_EDITOR_AUDIT_TOKEN: SOURCE_TOKEN,
      RULEKEEPER_TEST_START_OPTIONS: JSON.stringify({
        correlationSchedule: { minuteMs: MINUTE_MS, syncMs: 100 },
      }),
    }
  }

  const dataDirs = new Map<string, string>(REPLICAS.map((r) => [r, path.join(root, `data-${r}`)]))
  const start = async (replica: string) => {
    const child = await startChild({ dataDir: dataDirs.get(replica)!, env: env(replica), timeoutMs: 90_000 })
    live.set(replica, child)
    return child
  }
  await Promise.all(REPLICAS.map(start))
  const api = async (replica: string, p: string) => {
    const res = await fetch(`${live.get(replica)!.url}${p}`, { headers: { 'X-API-Key': API_TOKEN } })
    return { status: res.status, body: (await res.json()) as any }
  }
  for (const r of REPLICAS)
    t.equal((await api(r, `/simple-rules/${RULE}`)).status, 200, `${r} serves ${RULE} from the Git remote`)
  t.comment(`three replicas started in ${((Date.now() - started) / 1000).toFixed(1)} s`)

  // The load: each request sent once (never again: un-acknowledged records may or may not be stored).
  const sent: Sent[] = []
  const acked = new Set<number>()
  let requests = 0
  let ackedRequests = 0
  const failures = new Map<string, number>()
  let stopLoad = false
  let turn = 0
  /** Requests under way per replica (a kill is aimed at one most of the time). */
  const inflight = new Map<string, number>(REPLICAS.map((r) => [r, 0]))
  const loadStarted = Date.now()
  const sender = async () => {
    const agents = new Map<string, { pid: number; agent: http.Agent }>()
    try {
      while (!stopLoad && sent.length < MAX_RECORDS) {
        const up = REPLICAS.filter((r) => live.has(r))
        const replica = up[turn++ % up.length]!
        const child = live.get(replica)!
        let a = agents.get(replica)
        if (a?.pid !== child.pid) {
          a?.agent.destroy()
          a = { pid: child.pid, agent: new http.Agent({ keepAlive: true, maxSockets: 1 }) }
          agents.set(replica, a)
        }
        const batch: Sent[] = Array.from({ length: 10 + loadRand.int(41) }, () => {
          const n = sent.length
          const rare = loadRand.bool(0.02)
          const user = rare ? `rare${loadRand.int(RARE)}` : `u${loadRand.int(USERS)}`
          const s = { n, email: `${user}@example.com`, eventMs: windowOf(n) }
          sent.push(s)
          return s
        })
        requests++
        inflight.set(replica, inflight.get(replica)! + 1)
        try {
          const res = await post(
            `${child.url}/http/editor-audit`,
            ndjson(batch.map(record)),
            { authorization: `Bearer ${SOURCE_TOKEN}` },
            { agent: a.agent },
          )
          if (res.status === 200) {
            for (const s of batch) acked.add(s.n)
            ackedRequests++
          } else failures.set(`status ${res.status}`, (failures.get(`status ${res.status}`) ?? 0) + 1)
        } catch (err) {
          const what = /ECONNRESET|ECONNREFUSED|socket hang up|EPIPE/.exec(String(err))?.[0] ?? String(err)
          failures.set(what, (failures.get(what) ?? 0) + 1)
        } finally {
          inflight.set(replica, inflight.get(replica)! - 1)
        }
        await sleep(PAUSE_MS) // wait: the load's pace between requests
      }
    } finally {
      for (const { agent } of agents.values()) agent.destroy()
    }
  }
  const senders = Array.from({ length: SENDERS }, () => sender())

  // The kills: at seeded moments 1.5 to 4.5 s apart, one live replica (never the last one live),
  // a third of the time the lease's holder, three times in four while a request to it is under way
  // (0 to 20 ms into it: storing, fsyncing or answering); each started again at once, in the background.
  const leaseHolder = async () =>
    (
      (await db.query("SELECT holder FROM leases WHERE name = 'schedules' AND expires_at > now()")).rows[0]?.holder as
        | string
        | undefined
    )?.split('/')[0]
  const restarts: Array<Promise<void>> = []
  const moments: string[] = []
  let holderKills = 0
  let killsDuringRequests = 0
  let due = Date.now()
  for (let k = 0; k < KILLS; k++) {
    due += 1500 + killRand.int(3000)
    await sleep(Math.max(0, due - Date.now())) // wait: a seeded kill moment (the crash is the point)
    await waitFor('two replicas live', () => live.size >= 2, 120_000, 20)
    const up = REPLICAS.filter((r) => live.has(r))
    const holder = await leaseHolder()
    const victim = killRand.bool(1 / 3) && holder && live.has(holder) ? holder : killRand.pick(up)
    if (victim === holder) holderKills++
    if (killRand.bool(0.75)) {
      await waitFor('a request to the victim', () => inflight.get(victim)! > 0, 3000, 1).catch(() => {})
      await sleep(killRand.int(20)) // wait: a seeded moment within the request (the crash is the point)
    }
    const child = live.get(victim)!
    live.delete(victim)
    const at = Date.now() - loadStarted
    const during = inflight.get(victim)! > 0
    if (during) killsDuringRequests++
    await child.kill()
    const killedAt = Date.now()
    restarts.push(
      start(victim).then((c) => {
        moments.push(
          `#${k + 1} ${victim}${victim === holder ? ' (lease holder)' : ''}${during ? ' (a request under way)' : ''} at ${at} ms, back in ${Date.now() - killedAt} ms (start ${c.startMs} ms)`,
        )
      }),
    )
  }
  await Promise.all(restarts)
  stopLoad = true
  await Promise.all(senders)
  const loadEnded = Date.now()
  for (const m of moments.sort((a, b) => Number(/#(\d+)/.exec(a)![1]) - Number(/#(\d+)/.exec(b)![1]))) t.comment(m)
  t.comment(
    `load: ${sent.length} records in ${requests} requests over ${((loadEnded - loadStarted) / 1000).toFixed(1)} s, ` +
      `${ackedRequests} acknowledged (${acked.size} records); not: ${JSON.stringify(Object.fromEntries(failures))}`,
  )
  t.ok(ackedRequests > requests / 2, 'most requests were acknowledged')
  t.comment(`${killsDuringRequests} kills while a request to the replica was under way`)

  // Detection caught up on every replica (each evaluates its own folder from its checkpoint).
  await waitFor(
    'detection caught up on every replica',
    async () => {
      for (const r of REPLICAS) {
        const st = (await api(r, '/status')).body.detection
        if (st.lagSeconds !== 0 || st.failed) return false
      }
      return true
    },
    60_000,
    200,
  )

  // Every acknowledged record stored exactly once; no record stored twice.
  const lines = storedLines(eventsDir)
  const torn = lines.filter((l) => {
    try {
      JSON.parse(l.text)
      return false
    } catch {
      return true
    }
  })
  t.same(
    torn.map((l) => l.file),
    [],
    'every stored line is whole JSON',
  )
  const times = new Map<number, number>()
  for (const l of lines) {
    if (torn.includes(l)) continue
    const id = String(JSON.parse(l.text).metadata?.id)
    const n = Number(/^kill-(\d+)$/.exec(id)?.[1] ?? -1)
    times.set(n, (times.get(n) ?? 0) + 1)
  }
  t.same(
    [...acked].filter((n) => times.get(n) !== 1).map((n) => [n, times.get(n) ?? 0]),
    [],
    'every acknowledged record is stored exactly once',
  )
  t.same(
    [...times].filter(([n, c]) => c > 1 || n < 0 || n >= sent.length),
    [],
    'no record stored twice, none that was not sent',
  )
  const stored = [...times.keys()].map((n) => sent[n]!)
  t.comment(`${stored.length} records stored (${stored.length - acked.size} of them not acknowledged)`)

  // Every alert group once: one per user and window, counting each stored record once; an alert
  // exactly when it reached the threshold.
  const expected = new Map<string, { count: number; key: string }>()
  for (const s of stored) {
    const id = alertId(RULE, JSON.stringify([s.email]), s.eventMs)
    const e = expected.get(id) ?? { count: 0, key: `${s.email} @ ${new Date(s.eventMs).toISOString()}` }
    e.count++
    expected.set(id, e)
  }
  const groupsNow = async () =>
    (
      await db.query<{ id: string; event_count: string; alert: boolean; matches: string }>(
        `SELECT g.id, g.event_count, g.alert,
           (SELECT count(*) FROM detection_matches m WHERE m.alert_id = g.id) AS matches
         FROM alert_groups g WHERE g.rule_id = $1 ORDER BY g.id`,
        [RULE],
      )
    ).rows
  const mismatches = async () => {
    const out: string[] = []
    const rows = await groupsNow()
    for (const g of rows) {
      const e = expected.get(g.id)
      if (!e) out.push(`unexpected group ${g.id} (${g.event_count} events)`)
      else if (Number(g.event_count) !== e.count) out.push(`${e.key}: ${g.event_count} events, ${e.count} stored`)
      else if (g.alert !== e.count >= THRESHOLD) out.push(`${e.key}: alert ${g.alert} at ${e.count} events`)
      else if (Number(g.matches) !== e.count) out.push(`${e.key}: ${g.matches} match lines, ${e.count} stored`)
    }
    const have = new Set(rows.map((g) => g.id))
    for (const [id, e] of expected) if (!have.has(id)) out.push(`no group for ${e.key} (${e.count} stored)`)
    return out
  }
  // Detection's commits are the last step of catching up; a short wait covers a commit under way.
  let groupProblems: string[] = []
  await waitFor(
    'the groups to count every stored record',
    async () => (groupProblems = await mismatches()).length === 0,
    15_000,
    250,
  ).catch(() => {})
  t.same(groupProblems.slice(0, 20), [], 'every group once, counting each stored record once')
  const alerts = [...expected].filter(([, e]) => e.count >= THRESHOLD).map(([id]) => id)
  t.ok(alerts.length >= USERS, `${alerts.length} alerts of ${expected.size} groups`)
  const listed: string[] = []
  for (let cursor: string | null = null; ; ) {
    const page = await api('rk-a', `/alerts?rule-id=${RULE}&limit=1000${cursor ? `&cursor=${cursor}` : ''}`)
    listed.push(...page.body.results.map((a: { id: string }) => a.id))
    cursor = page.body.next
    if (!cursor) break
  }
  t.same(listed.sort(), [...alerts].sort(), 'GET /alerts lists each alert once')

  // Every alert delivered at least once, with its id as the Idempotency-Key: the claims of a killed
  // replica come back after their claim time (twice the timeout plus 30 s), so the wait allows 90 s.
  let undelivered: string[] = []
  await waitFor(
    'every alert acknowledged by the receiver',
    () => {
      const got = rx.acked()
      undelivered = alerts.filter((id) => !got.has(id))
      return undelivered.length === 0
    },
    90_000,
    250,
  ).catch(() => {})
  t.same(undelivered, [], 'every alert reached the receiver (2xx) at least once')
  t.same(
    rx.got.filter((r) => JSON.parse(r.body).id !== r.key).map((r) => r.key),
    [],
    'every request: Idempotency-Key = the alert id in its body',
  )
  const alertSet = new Set(alerts)
  t.same(
    rx.got.filter((r) => !alertSet.has(r.key)).map((r) => r.key),
    [],
    'no request for an alert that does not exist',
  )
  // The outbox agrees: one delivery row per alert, delivered (its outcome is written after the 2xx).
  const outbox = async () =>
    (
      await db.query<{ alert_id: string; state: string }>(
        "SELECT alert_id, state FROM deliveries WHERE destination_id = 'rx' ORDER BY alert_id",
      )
    ).rows
  await waitFor(
    'every delivery recorded as delivered',
    async () => (await outbox()).filter((d) => d.state === 'delivered').length >= alerts.length,
    20_000,
    200,
  ).catch(() => {})
  t.same(
    (await outbox()).map((d) => [d.alert_id, d.state]),
    [...alerts].sort().map((id) => [id, 'delivered']),
    'the outbox holds one delivery per alert, delivered',
  )
  const makers = await db.query<{ alerted_by: string | null; n: string }>(
    'SELECT alerted_by, count(*) AS n FROM alert_groups WHERE rule_id = $1 AND alert GROUP BY 1 ORDER BY 1',
    [RULE],
  )
  t.same(
    makers.rows.filter((r) => r.alerted_by === null),
    [],
    'every alert names the replica whose commit made it',
  )
  t.comment(`alerts made by ${makers.rows.map((r) => `${r.alerted_by}: ${r.n}`).join(', ')}`)
  const repeats = [...rx.acked().values()].reduce((sum, n) => sum + n - 1, 0)
  t.comment(
    `${rx.got.length} delivery requests, ${rx.got.filter((r) => r.answered === 500).length} answered 500, ` +
      `${rx.got.filter((r) => r.answered === 'hang').length} not answered, ` +
      `${repeats} alerts acknowledged again (same key)`,
  )

  // The schedule: every slot from the first to the last once, none skipped, and slots ran to the end.
  const runs = async () =>
    (
      await db.query<{ slot: string; holder: string }>(
        `SELECT (extract(epoch FROM slot) * 1000)::bigint AS slot, holder FROM job_runs WHERE job = $1 ORDER BY slot`,
        [`correlation:${CORRELATION}`],
      )
    ).rows.map((r) => ({ slot: Number(r.slot), holder: r.holder.split('/')[0]! }))
  const endSlot = Math.floor(Date.now() / PERIOD) * PERIOD
  await waitFor('the current slot run', async () => ((await runs()).at(-1)?.slot ?? 0) >= endSlot, 30_000, 100).catch(
    () => {},
  )
  const slots = await runs()
  const first = slots[0]?.slot ?? 0
  t.same(
    slots.map((r) => (r.slot - first) / PERIOD),
    slots.map((_, i) => i),
    'every slot from the first to the last ran once, none skipped',
  )
  t.ok((slots.at(-1)?.slot ?? 0) >= endSlot, 'the slots ran up to the end')
  t.ok(first <= Math.floor(loadStarted / PERIOD) * PERIOD, 'the first slot ran before the load')
  const holders = new Set(slots.map((r) => r.holder))
  t.comment(
    `${slots.length} slots, run by ${[...holders].join(', ')}; ${holderKills} kills of the lease's holder; ` +
      `${((Date.now() - started) / 1000).toFixed(1)} s in all`,
  )
  t.ok(holderKills > 0, 'the lease holder was killed at least once')
})
