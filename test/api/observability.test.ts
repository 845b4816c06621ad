// Observability: one JSON log line per request (request id, actor, route, status, duration) with
// secrets never present, /metrics in Prometheus text with request and commit counters,
// X-Request-Id on every response (the caller's when sane), /healthz without auth.
import t from 'tap'
import { startInProcess } from '../helpers/in-process.js'
import { SAMPLE_BODIES } from '../helpers/rulekeeper.js'
import { waitFor } from '../helpers/wait.js'

t.test('logs carry request id, actor, route, status and duration, and never a secret', async (t) => {
  const lines: string[] = []
  const secret = `rk_BootstrapTok1_${'A'.repeat(43)}`
  const s = await startInProcess({ logLines: lines, env: { RULEKEEPER_BOOTSTRAP_TOKEN: secret } })
  t.teardown(() => s.close())
  const res = await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('Log.Me'), { 'X-Request-Id': 'req-log-1' })
  t.equal(res.status, 200)
  t.equal(res.headers.get('x-request-id'), 'req-log-1')
  await s.send('GET', '/simple-rules', undefined, {
    'X-API-Key': 'rk_wrong_secret',
    Authorization: 'Bearer super-secret-value',
  })
  const requestLines = () => lines.map((l) => JSON.parse(l)).filter((e) => e.msg === 'request')
  await waitFor('both requests logged', () => requestLines().length >= 2, 5000, 10)
  const entries = lines.map((l) => JSON.parse(l))
  const entry = entries.find((e) => e.requestId === 'req-log-1' && e.msg === 'request')
  t.ok(entry, 'a request log line')
  t.equal(entry.route, '/simple-rules')
  t.equal(entry.status, 200)
  t.match(entry.actor, /^tok_/)
  t.type(entry.ms, 'number')
  const all = lines.join('\n')
  t.notMatch(all, secret)
  t.notMatch(all, 'rk_wrong_secret')
  t.notMatch(all, 'super-secret-value')
})

t.test('/metrics exposes request counts by route and status, and commits', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('Metric.One'))
  await s.request('GET', '/simple-rules/Nope')
  const m = await s.send('GET', '/metrics')
  t.equal(m.status, 200)
  t.match(m.headers.get('content-type'), /text\/plain/)
  t.match(m.text, /rulekeeper_http_requests_total\{method="POST",route="\/simple-rules",status="200"\} 1/)
  t.match(m.text, /rulekeeper_http_requests_total\{method="GET",route="\/simple-rules\/:id",status="404"\} 1/)
  t.match(m.text, /rulekeeper_commits_total 1/)
  t.match(m.text, /rulekeeper_http_request_duration_seconds_bucket/)
})

t.test('every response has an X-Request-Id; a hostile one is replaced; /healthz needs no auth', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  for (const p of ['/healthz', '/openapi.json', '/nowhere', '/simple-rules']) {
    const r = await s.send('GET', p)
    t.match(r.headers.get('x-request-id'), /^[\w.:-]{1,128}$/, p)
  }
  const r = await s.send('GET', '/healthz', undefined, { 'X-Request-Id': 'bad id\twith tab' })
  t.equal(r.status, 200)
  t.not(r.headers.get('x-request-id'), 'bad id\twith tab')
  const notFound = await s.send('GET', '/nowhere')
  t.equal(notFound.status, 404)
  t.type(notFound.body.message, 'string')
})
