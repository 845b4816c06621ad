// The pool's queue: bounded (all callers, and per caller) with a 503 that says when to retry,
// served round robin between callers, and a job whose AbortSignal fires leaves the queue (never
// started) or has its sandbox killed at once (running).
import t from 'tap'
import { createPythonEngine } from '../../../src/engine/python/index.js'
import { Registry } from '../../../src/metrics.js'
import { poolState } from '../../helpers/python-pool.js'
import { waitFor } from '../../helpers/wait.js'
import { contextWith, inlineRule } from './fixtures.js'

const sleeper = (seconds: number, tests = 1) =>
  inlineRule(
    `import time\n\ndef rule(event):\n    time.sleep(${seconds})\n    return True\n`,
    Array.from({ length: tests }, (_, i) => ({ name: `sleeps ${i}`, expected: true })),
  )
const scoped = (owner: string, signal?: AbortSignal) => ({ ...contextWith(), run: { owner, signal } })
/** The pool's state as its metrics (registered in `metrics`) show it. */
const stateOf = (metrics: Registry) => async () => poolState(await metrics.metrics())

t.test('a full queue answers 503 with Retry-After; per caller too, without refusing others', async (t) => {
  const metrics = new Registry()
  const { engine, pool } = createPythonEngine({
    command: 'python3',
    poolSize: 1,
    timeoutMs: 5000,
    queueLimit: 3,
    queuePerCaller: 2,
    metrics,
  })
  t.teardown(() => pool.close())
  const state = stateOf(metrics)
  const running = engine.runTests(sleeper(0.8), scoped('a'))
  await waitFor('the first job in its sandbox', async () => (await state()).busy === 1, 20_000, 20)
  const queued = [engine.runTests(sleeper(0.1), scoped('a')), engine.runTests(sleeper(0.1), scoped('a'))]
  const err = await engine.runTests(sleeper(0.1), scoped('a')).then(
    () => undefined,
    (e: unknown) => e as { status: number; message: string; headers: Record<string, string> },
  )
  t.equal(err?.status, 503, "a caller's third waiting rule is refused")
  t.match(err?.message, /this caller already has 2 rules waiting/)
  t.ok(Number(err?.headers['Retry-After']) >= 1, `Retry-After: ${err?.headers['Retry-After']}`)
  const other = engine.runTests(sleeper(0.1), scoped('b'))
  const full = await engine.runTests(sleeper(0.1), scoped('c')).then(
    () => undefined,
    (e: unknown) => e as { status: number; message: string },
  )
  t.match(full, { status: 503, message: /3 rules are waiting/ }, 'all callers together are bounded too')
  const results = await Promise.all([running, ...queued, other])
  t.ok(
    results.flat().every((o) => o.passed === true),
    'everything accepted ran and passed',
  )
})

t.test("round robin: one caller's burst delays another's rule by one job at most", async (t) => {
  const metrics = new Registry()
  const { engine, pool } = createPythonEngine({ command: 'python3', poolSize: 1, timeoutMs: 5000, metrics })
  t.teardown(() => pool.close())
  const order: string[] = []
  const burst = Array.from({ length: 6 }, (_, i) =>
    engine.runTests(sleeper(0.15), scoped('burst')).then(() => order.push(`burst-${i}`)),
  )
  // The first of the burst has left the queue (it waits for or runs in its sandbox), the other five wait.
  await waitFor('the burst queued first', async () => (await stateOf(metrics)()).queued === 5, 20_000, 20)
  const single = engine.runTests(sleeper(0.15), scoped('single')).then(() => order.push('single'))
  await Promise.all([...burst, single])
  t.ok(order.indexOf('single') <= 2, `served after at most one more of the burst: ${order.join(', ')}`)
})

t.test('aborted while waiting: never started, every test says why', async (t) => {
  const metrics = new Registry()
  const { engine, pool } = createPythonEngine({ command: 'python3', poolSize: 1, timeoutMs: 5000, metrics })
  t.teardown(() => pool.close())
  const busy = engine.runTests(sleeper(0.6), scoped('a'))
  await waitFor('the busy job in its sandbox', async () => (await stateOf(metrics)()).busy === 1, 20_000, 20)
  const controller = new AbortController()
  const waiting = engine.runTests(sleeper(0.1, 2), scoped('b', controller.signal))
  controller.abort(new Error('the client disconnected'))
  const outcomes = await waiting
  t.same(
    outcomes.map((o) => [o.passed, o.error]),
    [
      [false, 'not run: the client disconnected'],
      [false, 'not run: the client disconnected'],
    ],
  )
  t.ok((await busy).every((o) => o.passed))
})

t.test('aborted while running: the sandbox is killed at once, the rest is not run', async (t) => {
  const metrics = new Registry()
  const { engine, pool } = createPythonEngine({ command: 'python3', poolSize: 1, timeoutMs: 10_000, metrics })
  t.teardown(() => pool.close())
  const controller = new AbortController()
  const running = engine.runTests(sleeper(5, 3), scoped('a', controller.signal))
  await waitFor('the job in its sandbox', async () => (await stateOf(metrics)()).busy === 1, 20_000, 20)
  const aborted = Date.now()
  controller.abort(new Error("the request's test time budget of 1 s was used up"))
  const outcomes = await running
  const ms = Date.now() - aborted
  t.ok(ms < 1900, `stopped ${ms} ms after the abort, not after 15 s of sleeping`)
  t.match(outcomes[0], {
    passed: false,
    error: /not run to the end: the request's test time budget of 1 s was used up/,
  })
  t.match(outcomes[1], { passed: false, error: /not run: the request's test time budget/ })
  t.match(outcomes[2], { passed: false, error: /not run: the request's test time budget/ })
})
