// The worker pool's life: nothing starts before the first job, workers run the real interpreter
// (not a shell, not a shim) with an empty environment, concurrent rules share at most poolSize
// workers, close() leaves no process behind, and a missing interpreter is a clear 503, never a pass.
import { readFileSync, readdirSync } from 'node:fs'
import t from 'tap'
import { isRulekeeperError } from '../../../src/errors.js'
import { createPythonEngine } from '../../../src/engine/python/index.js'
import { contextWith, exampleGlobal, exampleRule, inlineRule } from './fixtures.js'

/** Pids of this test process's direct children. */
function childPids(): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === process.pid) pids.push(Number(entry))
    } catch {
      // exited meanwhile
    }
  }
  return pids
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Waits up to 2 s for a process to be gone (reaped). */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 40 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50))
  return !alive(pid)
}

const ctx = contextWith(exampleGlobal())

t.test('no process before the first job; real interpreter, empty environment; close kills all', async (t) => {
  const { engine, pool } = createPythonEngine({ command: 'python3', poolSize: 2, timeoutMs: 5000 })
  t.teardown(() => pool.close())
  t.same(pool.pids(), [])
  t.same(await engine.runTests(inlineRule('def rule(e):\n    return True\n', []), ctx), [], 'a rule without tests starts nothing')
  t.same(childPids(), [], 'creating the engine started no process')

  const outcomes = await engine.runTests(exampleRule(), ctx)
  t.ok(outcomes.every((o) => o.passed))
  const [pid] = pool.pids()
  t.ok(pid && childPids().includes(pid))
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
  const info = await pool.describe()
  t.equal(argv[0], info.interpreter.executable, 'the interpreter itself, no shell or shim in between')
  t.same(argv.slice(1, 3), ['-I', '-B'])
  t.match(argv[3], /python\/rulekeeper_worker\.py$/)
  // tap's processinfo plugin patches spawn() to add its own _TAPJS_* variables (and NODE_OPTIONS)
  // to every child in the suite; nothing else may be there.
  const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter((v) => v && !/^(_TAPJS_|NODE_OPTIONS=)/.test(v))
  t.same(environ, [], 'an empty environment')

  await pool.close()
  t.notOk(alive(pid!), 'the worker is gone')
  t.same(childPids(), [], 'no child process left')
  await t.rejects(engine.runTests(exampleRule(), ctx), { code: 'Unavailable' }, 'a closed pool refuses work')
})

t.test('concurrent rules run side by side on at most poolSize workers', async (t) => {
  const { engine, pool } = createPythonEngine({ command: 'python3', poolSize: 2, timeoutMs: 5000 })
  t.teardown(() => pool.close())
  await Promise.all([pool.ping(), pool.ping()]) // two jobs waiting at once: a second worker starts
  for (let i = 0; i < 200 && pool.pids().length < 2; i++) await new Promise((r) => setTimeout(r, 50))
  t.equal(pool.pids().length, 2, 'two warm workers')
  // Each run reports when its test ran (wall clock inside the child); load-independent overlap check.
  const slow = inlineRule(
    'import time\n\nSPAN = []\n\ndef rule(event):\n    SPAN.append(time.time())\n    time.sleep(0.4)\n    SPAN.append(time.time())\n    return True\n\ndef alert_context(event):\n    return {"span": SPAN}\n',
    [{ name: 'slow', expected: true }],
  )
  const runs = await Promise.all(Array.from({ length: 4 }, () => engine.runTests(slow, ctx)))
  t.ok(runs.flat().every((o) => o.passed === true))
  const spans = runs.map((r) => (r[0]!.functions!.alertContext!.output as { span: [number, number] }).span)
  const overlapping = spans.some((a, i) => spans.some((b, j) => i !== j && a[0] < b[1] && b[0] < a[1]))
  t.ok(overlapping, 'at least two rules ran at the same time')
  t.equal(pool.pids().length, 2, 'never more than poolSize workers')
})

t.test('a worker that stops answering is killed at the backstop and replaced', async (t) => {
  const { engine, pool } = createPythonEngine({ command: 'python3', poolSize: 1, timeoutMs: 200, backstopSlackMs: 300 })
  t.teardown(() => pool.close())
  t.ok((await engine.runTests(exampleRule(), ctx)).every((o) => o.passed))
  const [stuck] = pool.pids()
  process.kill(stuck!, 'SIGSTOP') // a worker that hangs, whatever the reason
  const outcomes = await engine.runTests(exampleRule(), ctx)
  t.ok(outcomes.every((o) => o.passed === false && /did not answer within 1300 ms and was killed/.test(o.error ?? '')))
  t.ok(await gone(stuck!), 'the stuck worker was killed')
  t.ok((await engine.runTests(exampleRule(), ctx)).every((o) => o.passed), 'a new worker serves the next run')
  t.not(pool.pids()[0], stuck)
})

t.test('no python3: runTests and checkPythonModule reject with a clear 503', async (t) => {
  for (const command of ['python3-not-installed-rk', '/nonexistent/bin/python3']) {
    const { engine, pool, checkPythonModule } = createPythonEngine({ command, poolSize: 1, timeoutMs: 5000 })
    t.teardown(() => pool.close())
    const err = await engine.runTests(exampleRule(), ctx).then(
      () => undefined,
      (e: unknown) => e,
    )
    t.ok(isRulekeeperError(err), command)
    t.match(err, { code: 'Unavailable', status: 503, message: /Python tests cannot run: python.command '.*python3.*' (was not found on the server's PATH|is not an executable file)/ })
    await t.rejects(checkPythonModule(exampleRule(), ctx), { code: 'Unavailable', status: 503 })
    t.same(pool.pids(), [])
  }
})

t.test('python3 absent from the server PATH: 503, and nothing was started', async (t) => {
  const { engine, pool } = createPythonEngine({ command: 'python3', poolSize: 1, timeoutMs: 5000, serverEnv: { PATH: '/nonexistent-bin:/also-missing' } })
  t.teardown(() => pool.close())
  const outcome = engine.runTests(exampleRule(), ctx)
  await t.rejects(outcome, { code: 'Unavailable', status: 503, message: /python.command 'python3' was not found on the server's PATH/ })
  t.same(childPids(), [])
})

t.test('a command that is not Python is unavailable too', async (t) => {
  const { engine, pool } = createPythonEngine({ command: '/bin/false', poolSize: 1, timeoutMs: 5000 })
  t.teardown(() => pool.close())
  await t.rejects(engine.runTests(exampleRule(), ctx), { code: 'Unavailable', message: /exited with code 1 when asked for its version/ })
})
