// Bounded work on the API: a full Python queue answers 503 with Retry-After, a request's Python
// tests stop at its time budget with every unfinished test saying so, and a client that hangs up
// frees its run at once (the next caller does not wait for a rule nobody is waiting for).
// Real port: slow or hanging clients (a client that hangs up mid-run).
import http from 'node:http'
import t from 'tap'
import { startInProcess } from '../helpers/in-process.js'
import { type PoolState, poolState } from '../helpers/python-pool.js'
import { httpRequest, startTestServer } from '../helpers/rulekeeper.js'
import { waitFor } from '../helpers/wait.js'

const rule = (id: string, seconds: number, tests = 1) => ({
  id,
  severity: 'LOW',
  body: `import time\n\ndef rule(event):\n    time.sleep(${seconds})\n    return True\n`,
  tests: Array.from({ length: tests }, (_, i) => ({ name: `sleeps ${i}`, expectedResult: true, log: {} })),
})
/**
 * A save's tests are its second job on the pool, after the import check (op "check"): once that
 * check has finished and a sandbox is busy, the only one submitted so far, its tests run.
 */
const testsRunning = (p: PoolState) => p.finished.check === 1 && p.busy === 1

t.test('a full queue: 503 with Retry-After and a message', async (t) => {
  const s = await startInProcess({
    config: { python: { command: 'python3', poolSize: 1, timeoutMs: 5000, queueLimit: 1, queuePerCaller: 1 } },
  })
  t.teardown(() => s.close())
  const pool = async () => poolState((await s.send('GET', '/metrics')).text)
  const first = s.request('POST', '/scheduled-rules?run-tests-only=true', rule('Q.One', 1))
  await waitFor("the first rule's tests in their sandbox", async () => testsRunning(await pool()), 20_000, 20)
  const second = s.request('POST', '/scheduled-rules?run-tests-only=true', rule('Q.Two', 0.1))
  await waitFor('the second rule queued', async () => (await pool()).queued === 1, 20_000, 20)
  const third = await s.request('POST', '/scheduled-rules?run-tests-only=true', rule('Q.Three', 0.1))
  t.equal(third.status, 503)
  t.match(third.body, { message: /Python tests are busy/ })
  t.ok(Number(third.headers.get('retry-after')) >= 1, `Retry-After: ${third.headers.get('retry-after')}`)
  t.equal((await first).status, 204)
  t.equal((await second).status, 204)
})

t.test("the request's test time budget stops its tests, each saying why", async (t) => {
  const s = await startInProcess({
    config: { python: { command: 'python3', poolSize: 1, timeoutMs: 5000, requestBudgetMs: 3000 } },
  })
  t.teardown(() => s.close())
  const started = Date.now()
  // 2 s per test against a 3 s budget: the first ends with a second to spare even on a busy machine.
  const res = await s.request('POST', '/scheduled-rules?run-tests-only=true', rule('B.Slow', 2, 3))
  t.ok(Date.now() - started < 5000, `answered in ${Date.now() - started} ms`)
  t.equal(res.status, 400)
  const results = (res.body as { testResults: Array<{ passed: boolean; error: string | null }> }).testResults
  t.equal(results[0]!.passed, true, 'the first test finished inside the budget')
  t.match(results[1]!.error, /not run to the end: the request's test time budget of 3 s was used up/)
  t.match(results[2]!.error, /not run: the request's test time budget of 3 s was used up/)
})

t.test('a client that hangs up frees its run for the next caller', async (t) => {
  const s = await startTestServer({ config: { python: { command: 'python3', poolSize: 1, timeoutMs: 20_000 } } })
  t.teardown(() => s.close())
  const body = JSON.stringify(rule('D.Gone', 15))
  const req = http.request(`${s.url}/scheduled-rules?run-tests-only=true`, {
    method: 'POST',
    headers: { 'X-API-Key': s.token, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
  })
  req.on('error', () => {})
  req.end(body)
  const pool = async () => poolState((await httpRequest(s.url, 'GET', '/metrics')).text)
  await waitFor('its tests in their sandbox', async () => testsRunning(await pool()), 20_000, 20)
  req.destroy() // the client hangs up mid-run
  const started = Date.now()
  const next = await s.request('POST', '/scheduled-rules?run-tests-only=true', rule('D.Next', 0.1))
  t.equal(next.status, 204)
  t.ok(Date.now() - started < 4000, `the next caller waited ${Date.now() - started} ms, not 15 s`)
})
