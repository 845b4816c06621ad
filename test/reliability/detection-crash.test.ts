// Detection under SIGKILL (quality.md, Reliability): a child server ingesting under load with
// detection running is killed at random moments, 30 times (RULEKEEPER_DETECT_KILLS). Afterwards
// every acknowledged record is stored and evaluated (the checkpoint covers every data file; each
// record has exactly one match per rule that matches it), and every alert exists once with the
// count, first and last event time an independent model of the grouping gives over the stored order.
// Real port: a crash (SIGKILL of a child server).
import { rmSync, writeFileSync } from 'node:fs'
import { readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { alertId } from '../../src/detect/grouping.js'
import { makeRecord, TOKEN as SOURCE_TOKEN } from '../ingest/helpers.js'
import { CrashServer, IngestLoad } from '../helpers/crash-harness.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'

const KILLS = Math.max(1, Number(process.env.RULEKEEPER_DETECT_KILLS ?? 30))
const WORKERS = 4
const BATCH = 50
const API_TOKEN = 'rk-detect-crash-bootstrap-token-0123456789'
const RULE = 'Crash.FailedLogins'
const PERIOD_MIN = 10
const THRESHOLD = 3
// No alert limit in reach: on a fast run the rule makes over 1,000 alerts in one clock hour, and
// the model below counts every alert (the limit has its own tests: test/detect/alert-limit.test.ts).
const CONFIG_DIR = tempDir('rk-detect-crash-config-')
t.teardown(() => rmSync(CONFIG_DIR, { recursive: true, force: true }))
const CONFIG = path.join(CONFIG_DIR, 'config.json')
writeFileSync(CONFIG, JSON.stringify({ detection: { alertsPerRuleHour: 1_000_000 } }))
const env = {
  RULEKEEPER_BOOTSTRAP_TOKEN: API_TOKEN,
  RULEKEEPER_EDITOR_AUDIT_TOKEN: SOURCE_TOKEN,
  RULEKEEPER_CONFIG: CONFIG,
}
const USERS = ['a', 'b', 'c', 'd', 'e'].map((u) => `${u}@example.com`)
const BASE = Date.parse('2026-11-20T06:00:00Z')

/** Record n: deterministic user, outcome and event time (3 s apart, every 7th 13 minutes early). */
function record(n: number) {
  const ms = BASE + n * 3000 - (n % 7 === 0 ? 13 * 60_000 : 0)
  return makeRecord(`dc-${n}`, new Date(ms).toISOString(), {
    user_email: USERS[(n * 7) % USERS.length],
    login: { login_type: 'LOGIN_TYPE_WEB', success: n % 3 !== 0 },
  })
}

async function ndjsonFiles(dir: string): Promise<string[]> {
  const out: string[] = []
  for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) out.push(...(await ndjsonFiles(p)))
    else if (e.name.endsWith('.ndjson')) out.push(p)
  }
  return out.sort()
}

t.test(`detection survives ${KILLS} SIGKILLs during ingest`, async (t) => {
  // Restarts dominate (2–4 s each on a quiet machine; 8–11 s at load average 15): the bound is for a
  // hung run, not a speed check.
  t.setTimeout(600_000)
  const started = Date.now()
  const dataDir = tempDir('rk-detect-crash-')
  const server = new CrashServer(t, dataDir, env, API_TOKEN)

  // The rule exists before any record arrives, so every record is evaluated by it.
  const created = await server.createRule({
    ...SAMPLE_BODIES.simple(RULE, {
      logTypes: ['Editor.Audit'],
      detection: '- KeyPath: login.success\n  Condition: Equals\n  Value: false\n',
      tests: [],
    }),
    threshold: THRESHOLD,
    dedupPeriodMinutes: PERIOD_MIN,
    groupBy: '- Key: user_email\n',
  })
  t.equal(created.status, 200, JSON.stringify(created.body))

  // Kill somewhere in the next ingest commits and detection batches, once a request was acknowledged.
  const load = new IngestLoad(record, BATCH)
  const { acked } = load
  const startMs = await server.killRounds({
    kills: KILLS,
    load,
    senders: WORKERS,
    progress: () => load.requests,
    killDelayMs: () => Math.random() * 400,
  })
  t.ok(load.requests > KILLS, `${load.requests} deliveries acknowledged across ${KILLS} kills`)

  // A last start: the sender's retries get through, detection catches up.
  const child = await server.start()
  for (const status of await load.resend(child.url)) t.equal(status, 200)
  await server.detectionCaughtUp()
  const listed = await server.alerts(RULE)
  t.equal(await child.stop(), 0, 'a clean stop')

  // The stored records, in stored order.
  const logs = path.join(dataDir, 'logs')
  const stored: Array<{ rec: any; file: string; offset: number }> = []
  const sizes = new Map<string, number>()
  for (const abs of await ndjsonFiles(path.join(logs, 'Editor.Audit'))) {
    const file = path.relative(logs, abs)
    const buf = await readFile(abs)
    sizes.set(file, buf.length)
    let off = 0
    for (const line of buf.toString('utf8').split('\n')) {
      if (line) stored.push({ rec: JSON.parse(line), file, offset: off })
      off += Buffer.byteLength(line) + 1
    }
  }
  const ids = stored.map((s) => s.rec.metadata.id as string)
  t.equal(new Set(ids).size, ids.length, 'no record stored twice')
  t.same(
    [...acked].filter((n) => !ids.includes(`dc-${n}`)).slice(0, 5),
    [],
    `every acknowledged record is stored (${acked.size})`,
  )

  // Every record evaluated: the checkpoint reaches the end of every data file.
  const det = path.join(dataDir, 'detections')
  const cp = JSON.parse(await readFile(path.join(det, 'checkpoint.json'), 'utf8'))
  t.same(
    [...sizes].filter(([f, size]) => (cp.logs[f] ?? 0) !== size), // an empty file (killed before its first write) has no entry
    [],
    'the checkpoint covers every data file to its end',
  )
  t.equal(cp.records, stored.length, 'each stored record was evaluated once (committed count)')

  // Each record: exactly one match of the template's signal rule for its outcome, and one of ours
  // when the login failed; never two.
  const matches = new Map<string, number>()
  for (const abs of await ndjsonFiles(path.join(det, 'matches'))) {
    const committed = cp.outputs[path.relative(det, abs)] ?? 0
    t.equal((await stat(abs)).size, committed, `${path.relative(det, abs)} holds only committed lines`)
    for (const line of (await readFile(abs, 'utf8')).split('\n')) {
      if (!line) continue
      const m = JSON.parse(line)
      const k = `${m.ruleId} ${m.record.partition} ${m.record.offset}`
      matches.set(k, (matches.get(k) ?? 0) + 1)
    }
  }
  const want = new Map<string, number>()
  for (const s of stored) {
    const failed = s.rec.login.success === false
    want.set(`Editor.Audit.Login${failed ? 'Failed' : 'Succeeded'} ${s.file} ${s.offset}`, 1)
    if (failed) want.set(`${RULE} ${s.file} ${s.offset}`, 1)
  }
  t.same(
    [...matches].filter(([k, n]) => want.get(k) !== n).slice(0, 5),
    [],
    'no match written twice, none of another record',
  )
  t.equal(matches.size, want.size, `one match per record and rule (${want.size})`)

  // The model: matches in stored order (p_parse_time, p_row_id), windows per dedup string.
  stored.sort((a, b) => {
    const ka = `${a.rec.p_parse_time}\u0000${a.rec.p_row_id}`
    const kb = `${b.rec.p_parse_time}\u0000${b.rec.p_row_id}`
    return ka < kb ? -1 : ka > kb ? 1 : 0
  })
  const groups = new Map<string, { starts: number[]; count: Map<number, number[]> }>()
  for (const { rec } of stored) {
    if (rec.login.success !== false) continue
    const dedup = JSON.stringify([rec.user_email])
    const ms = Date.parse(rec.p_event_time)
    const g = groups.get(dedup) ?? { starts: [] as number[], count: new Map<number, number[]>() }
    groups.set(dedup, g)
    const t0 = g.starts.filter((s) => s <= ms).sort((x, y) => y - x)[0]
    if (t0 !== undefined && ms < t0 + PERIOD_MIN * 60_000) g.count.get(t0)!.push(ms)
    else {
      g.starts.push(ms)
      g.count.set(ms, [ms])
    }
  }
  const expected = new Map<string, { eventCount: number; first: string; last: string }>()
  for (const [dedup, g] of groups)
    for (const [t0, times] of g.count)
      if (times.length >= THRESHOLD)
        expected.set(alertId(RULE, dedup, t0), {
          eventCount: times.length,
          first: new Date(Math.min(...times)).toISOString(),
          last: new Date(Math.max(...times)).toISOString(),
        })
  t.ok(expected.size > 10, `${expected.size} alerts expected`)
  t.equal(new Set(listed.map((a) => a.id)).size, listed.length, 'each alert listed once')
  t.same(
    listed
      .map((a) => [a.id, a.eventCount, a.firstEventTime, a.lastEventTime])
      .sort()
      .filter(([id, n, f, l]) => {
        const e = expected.get(id)
        return !e || e.eventCount !== n || e.first !== f || e.last !== l
      })
      .slice(0, 5),
    [],
    'every listed alert has the model’s count and times',
  )
  t.equal(listed.length, expected.size, 'every expected alert exists')
  t.comment(
    `${stored.length} records (${acked.size} acknowledged), ${listed.length} alerts, ${KILLS} kills, ` +
      `starts ${(startMs / 1000).toFixed(1)} s in all, ${((Date.now() - started) / 1000).toFixed(1)} s`,
  )
})
