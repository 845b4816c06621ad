// Replay bounded (issue 27 finding 1), on a real server in a child process over a real port: a
// replay that would hold more alert groups than `detection.replay.maxGroups` is refused with a clear
// 400 while the server's RSS stays within a bound (sampled from /proc while it runs); an answer of
// many alerts is streamed (chunked, built as it is written), /healthz answers while a slow client
// holds it unread, and a client that leaves mid-answer frees its place at once.
// Real port: the memory of a real server (its RSS under a large replay), and slow or hanging clients.
import { writeFile } from 'node:fs/promises'
import http from 'node:http'
import path from 'node:path'
import t, { type Test } from 'tap'
import { REPLAY_DAY, writeStoredAudit } from '../detect/stored-records.js'
import { startChild } from '../helpers/child-server.js'
import { httpRequest, SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'
import { readFileSync } from 'node:fs'

const TOKEN = 'rk_test_replay_bounds_token_0123456789abcdef'
const RULE = 'Rp.EachRecord'

/** A child server over `n` stored records with a disabled rule giving an alert per record. */
async function serverWith(t: Test, n: number, replay: Record<string, number>) {
  const dataDir = tempDir('rk-replay-bounds-')
  await writeStoredAudit(dataDir, n)
  const config = path.join(dataDir, '..', `${path.basename(dataDir)}-config.yaml`)
  await writeFile(config, JSON.stringify({ detection: { replay } }))
  const s = await startChild({ dataDir, env: { RULEKEEPER_BOOTSTRAP_TOKEN: TOKEN, RULEKEEPER_CONFIG: config } })
  t.teardown(() => s.stop())
  const rule = await httpRequest(
    s.url,
    'POST',
    '/simple-rules',
    {
      ...SAMPLE_BODIES.simple(RULE, {
        logTypes: ['Editor.Audit'],
        detection: '- KeyPath: p_log_type\n  Condition: Equals\n  Value: Editor.Audit\n',
        tests: [],
      }),
      enabled: false,
      groupBy: '- Key: p_row_id\n',
    },
    { 'X-API-Key': TOKEN },
  )
  t.equal(rule.status, 200, rule.text)
  return s
}

const rssOf = (pid: number) =>
  Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024
const MiB = 1024 ** 2
const replayBody = JSON.stringify({ ...REPLAY_DAY, ruleIds: [RULE] })

t.test('more alert groups than maxGroups: a clear 400, memory within a bound', async (t) => {
  const s = await serverWith(t, 60_000, { maxGroups: 2000 })
  const before = rssOf(s.pid)
  let peak = before
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssOf(s.pid))
  }, 10)
  const res = await httpRequest(s.url, 'POST', '/replay', JSON.parse(replayBody), { 'X-API-Key': TOKEN })
  clearInterval(sampler)
  t.equal(res.status, 400, res.text.slice(0, 300))
  t.equal(
    res.body?.message,
    'this replay would hold more than 2,000 alert groups (config detection.replay.maxGroups): narrow the range or name fewer rules',
  )
  // 60,000 alerts held and answered at once cost the server ~250 MB; 2,000 groups cost a few.
  t.ok(peak - before < 80 * MiB, `RSS +${((peak - before) / MiB).toFixed(0)} MiB during the replay (bound 80 MiB)`)
})

t.test('a streamed answer: /healthz answers while a slow client holds it; leaving frees the place', async (t) => {
  const n = 40_000
  const s = await serverWith(t, n, { maxGroups: 50_000, queue: 0 })
  const url = new URL('/replay', s.url)
  const post = () => {
    const req = http.request(url, {
      method: 'POST',
      headers: { 'X-API-Key': TOKEN, 'Content-Type': 'application/json' },
    })
    req.end(replayBody)
    return {
      req,
      res: new Promise<http.IncomingMessage>((resolve, reject) => req.once('response', resolve).once('error', reject)),
    }
  }
  const healthz = async () => {
    const t0 = Date.now()
    const r = await httpRequest(s.url, 'GET', '/healthz')
    return { status: r.status, ms: Date.now() - t0 }
  }

  // A client that reads one chunk, then nothing for a while.
  const slow = post()
  const res = await slow.res
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^application\/json/)
  t.equal(
    res.headers['transfer-encoding'],
    'chunked',
    'streamed: no Content-Length, the answer is written as it is built',
  )
  t.notOk('content-length' in res.headers)
  const first = await new Promise<Buffer>((resolve) => res.once('data', resolve))
  res.pause()
  t.match(first.toString('utf8'), /^\{"records":40000,"matches":40000,"rules":\[/)
  const checks = []
  for (let i = 0; i < 5; i++) checks.push(await healthz())
  t.ok(
    checks.every((c) => c.status === 200 && c.ms < 2000),
    `/healthz while the answer waits: ${checks.map((c) => `${c.status} in ${c.ms} ms`).join(', ')}`,
  )
  // The place is held while the answer is written: one more replay of this token is refused (queue 0)…
  const busy = await httpRequest(s.url, 'POST', '/replay', JSON.parse(replayBody), { 'X-API-Key': TOKEN })
  t.equal(busy.status, 503, 'the place is held while the answer is written')
  // …and freed once the client leaves.
  slow.req.destroy()
  let again = busy
  for (let i = 0; i < 100 && again.status === 503; i++) {
    await new Promise((r) => setTimeout(r, 50)) // wait: the poll interval of a wait on a condition
    again = await httpRequest(s.url, 'POST', '/replay', JSON.parse(replayBody), { 'X-API-Key': TOKEN })
  }
  t.equal(again.status, 200, 'a client that left freed its place')
  t.equal(again.body?.alerts?.length, n, 'a whole answer read at pace is the whole JSON')
  t.equal(again.body?.alertCount, n)
})
