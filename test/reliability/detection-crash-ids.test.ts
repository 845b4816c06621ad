// No duplicate detection output after a crash (issue 27, "What to build" 7): a child server
// ingesting under load is SIGKILLed at seeded random moments (RULEKEEPER_DUP_KILLS, default 8;
// RULEKEEPER_SEED), with three rules matching the same records (the template's login signals and
// an alerting rule of ours) and the template's correlation rule counting those signals (it runs at
// every start, over event times around now). Afterwards every match id in the committed detection
// output is there once: matches written before a kill are never written again when the records
// after the checkpoint are evaluated again, and no correlation run at a restart counts a signal twice.
// Real port: a crash (SIGKILL of a child server).
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { makeRecord, TOKEN as SOURCE_TOKEN } from '../ingest/helpers.js'
import { CrashServer, IngestLoad } from '../helpers/crash-harness.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'
import { SeededRandom } from '../helpers/seeded-random.js'

const KILLS = Math.max(1, Number(process.env.RULEKEEPER_DUP_KILLS ?? 8))
const SEED = Number(process.env.RULEKEEPER_SEED ?? 2727)
const API_TOKEN = 'rk-detect-dup-bootstrap-token-0123456789'
const RULE = 'Crash.Ids.FailedLogins'
const CORRELATION = 'Editor.Audit.BruteForceThenSuccess'
const env = { RULEKEEPER_BOOTSTRAP_TOKEN: API_TOKEN, RULEKEEPER_EDITOR_AUDIT_TOKEN: SOURCE_TOKEN }
const USERS = ['a', 'b', 'c', 'd'].map((u) => `${u}@example.com`)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function ndjsonFiles(dir: string): Promise<string[]> {
  const out: string[] = []
  for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) out.push(...(await ndjsonFiles(p)))
    else if (e.name.endsWith('.ndjson')) out.push(p)
  }
  return out.sort()
}

t.test(`no match id twice after ${KILLS} SIGKILLs`, async (t) => {
  t.setTimeout(600_000)
  t.comment(`seed ${SEED}`)
  const rand = new SeededRandom(SEED)
  const started = Date.now()
  // Event times within the correlation rule's 90-minute lookback of the runs at each start.
  const base = Date.now() - 40 * 60_000
  /** Record n: user n % 4; per user, five failed logins then a success (the correlation's sequence). */
  const record = (n: number) =>
    makeRecord(`dup-${n}`, new Date(base + n * 200).toISOString(), {
      user_email: USERS[n % USERS.length],
      login: { login_type: 'LOGIN_TYPE_WEB', success: Math.floor(n / USERS.length) % 6 === 5 },
    })
  const server = new CrashServer(t, tempDir('rk-detect-dup-'), env, API_TOKEN)
  const created = await server.createRule({
    ...SAMPLE_BODIES.simple(RULE, {
      logTypes: ['Editor.Audit'],
      detection: '- KeyPath: login.success\n  Condition: Equals\n  Value: false\n',
      tests: [],
    }),
    threshold: 2,
    dedupPeriodMinutes: 5,
    groupBy: '- Key: user_email\n',
  })
  t.equal(created.status, 200, JSON.stringify(created.body))

  const load = new IngestLoad(record, 40)
  await server.killRounds({
    kills: KILLS,
    load,
    senders: 3,
    progress: () => load.requests,
    killDelayMs: () => rand.next() * 600,
  })

  // The last start: retries get through, detection catches up, a correlation run after it commits.
  const child = await server.start()
  for (const status of await load.resend(child.url)) t.equal(status, 200)
  await server.detectionCaughtUp()
  // A run after the catch-up (409 while the run at start is still in progress or due).
  let run = await server.api('POST', `/correlation-rules/${CORRELATION}/run`)
  for (let waited = 0; run.status === 409 && waited < 60_000; waited += 100) {
    await sleep(100) // wait: poll interval of a wait on a condition
    run = await server.api('POST', `/correlation-rules/${CORRELATION}/run`)
  }
  t.equal(run.status, 200, JSON.stringify(run.body))
  for (let waited = 0; ; waited += 50) {
    const st = (await server.api('GET', '/status')).body.detection
    if (st.lagSeconds === 0 && !st.failed) break
    if (waited > 30_000) throw new Error(`detection did not settle: ${JSON.stringify(st)}`)
    await sleep(50) // wait: poll interval of a wait on a condition
  }
  t.equal(await child.stop(), 0, 'a clean stop')

  const det = path.join(server.dataDir, 'detections')
  const cp = JSON.parse(await readFile(path.join(det, 'checkpoint.json'), 'utf8'))
  const seen = new Map<string, number>()
  const byRule = new Map<string, number>()
  for (const abs of await ndjsonFiles(path.join(det, 'matches'))) {
    const text = (await readFile(abs)).subarray(0, cp.outputs[path.relative(det, abs)] ?? 0).toString('utf8')
    for (const line of text.split('\n')) {
      if (!line) continue
      const m = JSON.parse(line) as { id: string; ruleId: string }
      seen.set(m.id, (seen.get(m.id) ?? 0) + 1)
      byRule.set(m.ruleId, (byRule.get(m.ruleId) ?? 0) + 1)
    }
  }
  t.same([...seen].filter(([, n]) => n > 1).slice(0, 5), [], 'no match id appears twice in the committed output')
  t.ok((byRule.get(RULE) ?? 0) > 0, `matches of ${RULE}`)
  t.ok((byRule.get('Editor.Audit.LoginFailed') ?? 0) > 0, 'and of the template signal on the same records')
  t.ok((byRule.get(CORRELATION) ?? 0) > 0, 'and signals counted by the correlation rule')
  t.comment(
    `${load.acked.size} records, ${seen.size} match ids (${[...byRule].map(([r, n]) => `${r} ${n}`).join(', ')}), ` +
      `${KILLS} kills, ${((Date.now() - started) / 1000).toFixed(1)} s`,
  )
})
