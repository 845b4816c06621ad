// What an operator sees of a real `rulekeeper serve`: stdout holds JSON lines only (the banner
// too), a write's line names kind, rule id, change, commit and actor, a refused credential is a
// warn line with the token id presented (never the secret), start and shutdown are logged with
// their durations; `--pretty` renders the same records for a person. And /metrics after real
// actions: rules served by kind, invalid files, unit-test outcomes, the Python pool's series.
// Real port: a second process (the stdout of a real `rulekeeper serve`).
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import t from 'tap'
import { TokenStore } from '../../src/auth/token-store.js'
import { createLogger } from '../../src/log.js'
import { startChild } from '../helpers/child-server.js'
import { startInProcess } from '../helpers/in-process.js'
import { httpRequest, SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'
import { gitAs } from '../helpers/git-as.js'

// A free-form bootstrap secret (no `rk_<id>_` form), and a well-formed one no token has.
const SECRET = `ops-bootstrap-${'B'.repeat(40)}`
const UNKNOWN = `rk_NoSuchTok001_${'C'.repeat(43)}`

t.test('a real server logs JSON lines only: banner, writes, refused credentials, start and shutdown', async (t) => {
  const dataDir = tempDir('rk-ops-logs-')
  const child = await startChild({
    dataDir,
    env: { RULEKEEPER_LOG_LEVEL: 'info', RULEKEEPER_BOOTSTRAP_TOKEN: SECRET },
  })
  t.teardown(() => child.kill())
  const key = { 'X-API-Key': SECRET }
  const created = await httpRequest(child.url, 'POST', '/simple-rules', SAMPLE_BODIES.simple('Ops.Log.One'), {
    ...key,
    'X-Request-Id': 'ops-create',
  })
  t.equal(created.status, 200, 'created')
  const put = await httpRequest(child.url, 'PUT', '/simple-rules/Ops.Log.Two', SAMPLE_BODIES.simple('Ops.Log.Two'), {
    ...key,
    'X-Request-Id': 'ops-put',
  })
  t.equal(put.status, 201, 'created by PUT')
  t.equal(
    (
      await httpRequest(child.url, 'DELETE', '/simple-rules/Ops.Log.One', undefined, {
        ...key,
        'X-Request-Id': 'ops-del',
      })
    ).status,
    204,
    'deleted',
  )
  // A View Rules token trying to write (403), an unknown well-formed token and a malformed one (401).
  const viewer = new TokenStore(dataDir).create({ name: 'ops-viewer', permissions: ['View Rules'] })
  let forbidden = 0
  for (let i = 0; i < 40 && forbidden !== 403; i++) {
    forbidden = (
      await httpRequest(child.url, 'DELETE', '/simple-rules/Ops.Log.Two', undefined, {
        'X-API-Key': viewer.secret,
        'X-Request-Id': `ops-403-${i}`,
      })
    ).status
    if (forbidden !== 403) await new Promise((r) => setTimeout(r, 100)) // wait: poll interval of a wait on a condition
  }
  t.equal(forbidden, 403, 'a View Rules token may not delete')
  t.equal(
    (
      await httpRequest(child.url, 'GET', '/simple-rules', undefined, {
        'X-API-Key': UNKNOWN,
        'X-Request-Id': 'ops-401',
      })
    ).status,
    401,
  )
  t.equal(
    (
      await httpRequest(child.url, 'GET', '/simple-rules', undefined, {
        'X-API-Key': 'not-a-token',
        'X-Request-Id': 'ops-401b',
      })
    ).status,
    401,
  )
  t.equal(await child.stop(), 0, 'SIGTERM stops it cleanly')

  const stdout = child.stdout()
  const lines = stdout.split('\n').filter((l) => l !== '')
  const records: any[] = []
  const notJson = lines.filter((l) => {
    try {
      records.push(JSON.parse(l))
      return false
    } catch {
      return true
    }
  })
  t.same(notJson, [], 'every stdout line is JSON')
  t.ok(
    records.every((r) => typeof r.level === 'number' && typeof r.time === 'string' && typeof r.msg === 'string'),
    'every line has level, time and msg',
  )
  const serving = records.find((r) => r.msg === 'rulekeeper is serving')
  t.match(serving, { url: child.url, dataDir, startMs: Number }, 'start: URL, data directory and duration')
  t.ok(
    records.some((r) => r.banner === true && /log source editor-audit/.test(r.msg)),
    'the banner is structured lines',
  )
  const writes = records.filter((r) => typeof r.msg === 'string' && r.msg.startsWith('rule ') && r.ruleId)
  const byRequest = (id: string) => writes.find((w) => w.requestId === id)
  const actor = serving && records.find((r) => r.requestId === 'ops-create' && r.msg === 'request')?.actor
  t.match(actor, /^tok_/, 'the request line names the actor')
  t.match(
    byRequest('ops-create'),
    { kind: 'simple', ruleId: 'Ops.Log.One', change: 'created', commit: /^[0-9a-f]{40}$/, actor },
    'a create names kind, rule id, commit and actor',
  )
  t.match(byRequest('ops-put'), { kind: 'simple', ruleId: 'Ops.Log.Two', change: 'created', commit: /^[0-9a-f]{40}$/ })
  t.match(byRequest('ops-del'), { kind: 'simple', ruleId: 'Ops.Log.One', change: 'deleted', commit: /^[0-9a-f]{40}$/ })
  const denied = records.find((r) => r.status === 403)
  t.match(denied, { level: 40, tokenId: viewer.token.id }, '403: warn, with the token id')
  t.match(
    records.find((r) => r.requestId === 'ops-401'),
    { level: 40, status: 401, tokenId: 'tok_NoSuchTok001' },
    '401: warn, with the id the secret names',
  )
  const malformed = records.find((r) => r.requestId === 'ops-401b')
  t.match(malformed, { level: 40, status: 401 }, '401 with a malformed token: warn')
  t.notOk(malformed?.tokenId, 'no token id where none was presented')
  t.match(
    records.find((r) => r.msg === 'signal received'),
    { signal: 'SIGTERM' },
  )
  t.match(records.at(-1), { msg: 'rulekeeper stopped', shutdownMs: Number }, 'shutdown is the last line, timed')
  for (const secret of [SECRET, UNKNOWN, viewer.secret, 'not-a-token'])
    t.notOk(stdout.includes(secret), 'no secret reaches the log')
})

t.test('--pretty renders the records for a person', async (t) => {
  const out = new PassThrough()
  let text = ''
  out.on('data', (c: Buffer) => (text += c.toString()))
  const logger = createLogger({ pretty: true, destination: out, colors: false })
  logger.warn({ tokenId: 'tok_x', status: 401, token: 'rk_secret' }, 'request')
  await new Promise((r) => setImmediate(r))
  t.match(text, /^\d\d:\d\d:\d\d\.\d{3} WARN {2}request {2}.*tokenId=tok_x status=401/, 'time, level, message, fields')
  t.notMatch(text, 'rk_secret', 'redaction applies')
  t.throws(() => JSON.parse(text), 'not JSON')
})

const value = (metrics: string, series: string): number | undefined => {
  const line = metrics.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

t.test('/metrics after real actions: rules by kind, invalid files, test outcomes, the Python pool', async (t) => {
  const s = await startInProcess({ config: { python: { timeoutMs: 1500, poolSize: 1 } } })
  t.teardown(() => s.close())
  const scrape = async () => (await s.send('GET', '/metrics')).text
  const count = async (kind: string) => {
    let n = 0
    for (let cursor = ''; ; ) {
      const page = (await s.request('GET', `/${kind}-rules?limit=1000${cursor}`)).body
      n += page.results.length
      if (!page.next) return n
      cursor = `&cursor=${page.next}`
    }
  }
  let m = await scrape()
  for (const kind of ['simple', 'scheduled', 'correlation'])
    t.equal(value(m, `rulekeeper_rules{kind="${kind}"}`), await count(kind), `rules served: ${kind}`)
  t.equal(value(m, 'rulekeeper_invalid_files'), 0, 'no invalid file at start')
  for (const outcome of ['pass', 'fail', 'error', 'not_run'])
    t.equal(value(m, `rulekeeper_rule_tests_total{kind="simple",outcome="${outcome}"}`), 0, `${outcome} starts at 0`)

  // Simple rules: two passing tests, then one failing (400, nothing saved).
  t.equal((await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('Ops.Metric.One'))).status, 200)
  const failing = SAMPLE_BODIES.simple('Ops.Metric.Two', {
    tests: [{ name: 'wrong', expectedResult: true, log: { eventName: 'GetObject' } }],
  })
  t.equal((await s.request('POST', '/simple-rules', failing)).status, 400)
  // Scheduled rules: one test raising, one running past the timeout.
  const scheduled = SAMPLE_BODIES.scheduled('Ops.Metric.Py', {
    body: 'def rule(event):\n    if event.get("loop"):\n        while True:\n            pass\n    raise ValueError("boom")\n',
    tests: [
      { name: 'raises', expectedResult: true, log: {} },
      { name: 'loops', expectedResult: true, log: { loop: true } },
    ],
  })
  const py = await s.request('POST', '/scheduled-rules', scheduled)
  t.equal(py.status, 400, 'the scheduled rule fails its tests', { body: py.body })
  m = await scrape()
  t.equal(value(m, 'rulekeeper_rules{kind="simple"}'), await count('simple'), 'the new rule is served and counted')
  t.equal(value(m, 'rulekeeper_rule_tests_total{kind="simple",outcome="pass"}'), 2, 'two passes')
  t.equal(value(m, 'rulekeeper_rule_tests_total{kind="simple",outcome="fail"}'), 1, 'one failure')
  t.equal(
    value(m, 'rulekeeper_rule_tests_total{kind="scheduled",outcome="error"}'),
    2,
    'the raise and the timeout are errors',
  )
  t.equal(value(m, 'rulekeeper_python_timeouts_total'), 1, 'one Python timeout')
  t.equal(value(m, 'rulekeeper_python_kills_total{reason="timeout"}'), 1, 'its sandbox was killed')
  t.ok((value(m, 'rulekeeper_python_run_duration_seconds_count{op="test"}') ?? 0) >= 1, 'run durations are observed')
  t.equal(value(m, 'rulekeeper_python_queue_length'), 0, 'nothing queued')
  t.ok(value(m, 'rulekeeper_python_workers{state="busy"}') === 0, 'no sandbox busy')
  t.match(m, /rulekeeper_python_workers\{state="(idle|starting)"\} 1/, 'the spare is counted')

  // A broken file pushed with plain git: counted once the revision is applied.
  const dir = path.join(tempDir('rk-ops-git-'), 'w')
  execFileSync('git', ['clone', '-q', s.gitdir, dir])
  fs.writeFileSync(path.join(dir, 'simple_rules', 'broken.yml'), 'AnalysisType: rule\nRuleID: [unclosed\n')
  const git = (...args: string[]) => gitAs({ name: 'Pat', email: 'p@example.com' }, dir, ...args)
  git('add', '-A')
  git('commit', '-q', '-m', 'a broken file')
  git('push', '-q', 'origin', 'HEAD:main')
  const status = (await s.request('POST', '/reconcile')).body
  t.equal(
    value(await scrape(), 'rulekeeper_invalid_files'),
    status.invalidFiles.length,
    'invalid files as /status says',
  )
  t.ok(status.invalidFiles.length >= 1, 'the broken file is invalid')
})
