// The pool's life: nothing starts before the first job, each run is bubblewrap starting the real
// interpreter (not a shell, not a shim) with an empty environment, concurrent rules run side by
// side on at most poolSize runs, every job gets fresh processes, close() leaves no process behind,
// and a missing interpreter or sandbox is a clear 503, never a pass.
import { readFileSync, readdirSync } from 'node:fs'
import t from 'tap'
import { isRulekeeperError } from '../../../src/errors.js'
import { createPythonEngine } from '../../../src/engine/python/index.js'
import { contextWith, exampleGlobal, exampleRule, inlineRule } from './fixtures.js'

/** Pids of this test process's direct children. */
/** This process's children, but the TypeScript loader's own (tsx keeps an esbuild service process). */
function childPids(): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === process.pid && !stat.includes('(esbuild)')) pids.push(Number(entry))
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
  // wait: poll interval of a wait on a condition
  for (let i = 0; i < 40 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50))
  return !alive(pid)
}

const ctx = contextWith(exampleGlobal())

t.test('no process before the first job; real interpreter, empty environment; close kills all', async (t) => {
  const { engine, pool } = createPythonEngine({ command: 'python3', poolSize: 2, timeoutMs: 5000 })
  t.teardown(() => pool.close())
  t.same(pool.pids(), [])
  t.same(
    await engine.runTests(inlineRule('def rule(e):\n    return True\n', []), ctx),
    [],
    'a rule without tests starts nothing',
  )
  t.same(childPids(), [], 'creating the engine started no process')

  const outcomes = await engine.runTests(exampleRule(), ctx)
  t.ok(outcomes.every((o) => o.passed))
  // wait: poll interval of a wait on a condition
  for (let i = 0; i < 100 && pool.pids().length < 2; i++) await new Promise((r) => setTimeout(r, 20))
  const [pid] = pool.pids()
  t.ok(pid && childPids().includes(pid), 'a spare waits for the next job, a child of this process')
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
  const info = await pool.describe()
  t.match(argv[0], /\/bwrap$/, 'bubblewrap, no shell in between')
  const end = argv.lastIndexOf('--')
  const command = argv.slice(end + 1).filter((a) => a !== '')
  const interpreterAt = command.indexOf(info.interpreter.executable)
  t.ok(interpreterAt >= 0, 'then the interpreter itself, no shim')
  t.same(command.slice(interpreterAt + 1, interpreterAt + 5), ['-I', '-B', '-S', '/rulekeeper/rulekeeper_runner.py'])
  t.same(
    JSON.parse(command[interpreterAt + 5]!),
    info.interpreter.paths.slice(4),
    "then the interpreter's own sys.path (site is not run)",
  )
  // tap's processinfo plugin patches spawn() to add its own _TAPJS_* variables (and NODE_OPTIONS)
  // to every child in the suite; nothing else may be there.
  const environ = readFileSync(`/proc/${pid}/environ`, 'utf8')
    .split('\0')
    .filter((v) => v && !/^(_TAPJS_|NODE_OPTIONS=)/.test(v))
  t.same(environ, [], 'an empty environment')

  await pool.close()
  t.notOk(alive(pid!), 'the spare is gone')
  t.same(childPids(), [], 'no child process left')
  await t.rejects(engine.runTests(exampleRule(), ctx), { code: 'Unavailable' }, 'a closed pool refuses work')
})

t.test('concurrent rules run side by side on at most poolSize runs', async (t) => {
  const { engine, pool } = createPythonEngine({ command: 'python3', poolSize: 2, timeoutMs: 5000 })
  t.teardown(() => pool.close())
  await Promise.all([pool.ping(), pool.ping()])
  // wait: poll interval of a wait on a condition
  for (let i = 0; i < 200 && pool.pids().length < 2; i++) await new Promise((r) => setTimeout(r, 50))
  t.equal(pool.pids().length, 2, 'two spares ready')
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
  t.ok(pool.pids().length <= 4, 'never more than poolSize runs and poolSize spares')
})

t.test('a spare killed while it waits is replaced; the job still runs', async (t) => {
  const { engine, pool } = createPythonEngine({ command: 'python3', poolSize: 1, timeoutMs: 2000 })
  t.teardown(() => pool.close())
  t.ok((await engine.runTests(exampleRule(), ctx)).every((o) => o.passed))
  // wait: poll interval of a wait on a condition
  for (let i = 0; i < 100 && pool.pids().length < 1; i++) await new Promise((r) => setTimeout(r, 20))
  const [spare] = pool.pids()
  process.kill(-spare!, 'SIGKILL')
  t.ok(await gone(spare!), 'the spare is gone')
  t.ok(
    (await engine.runTests(exampleRule(), ctx)).every((o) => o.passed),
    'fresh sandboxes serve the next run',
  )
  t.notOk(pool.pids().includes(spare!))
})

t.test('every job runs in processes of its own: nothing one rule leaves is seen by the next', async (t) => {
  const { engine, pool } = createPythonEngine({ command: 'python3', poolSize: 1, timeoutMs: 2000 })
  t.teardown(() => pool.close())
  const planter = inlineRule(
    'import os, sys, builtins\n\ndef rule(event):\n    open("/tmp/planted", "w").write("x")\n    builtins.PLANTED = True\n    sys.modules["json"].dumps = lambda *a, **k: "forged"\n    return True\n',
    [{ name: 'plants', expected: true }],
  )
  const finder = inlineRule(
    'import os, builtins\n\ndef rule(event):\n    return os.path.exists("/tmp/planted") or hasattr(builtins, "PLANTED")\n\ndef alert_context(event):\n    return {"pid": os.getpid()}\n',
    [{ name: 'finds nothing', expected: false }],
  )
  const planted = await engine.runTests(planter, ctx)
  t.match(
    planted[0],
    { passed: false, error: /malformed message/ },
    'patching the runtime garbles only its own report, which stops its own run',
  )
  const found = await engine.runTests(finder, ctx)
  t.equal(found[0]!.passed, true, 'the next rule sees no planted file and no patched module')
  t.equal(
    (found[0]!.functions!.alertContext!.output as { pid: number }).pid,
    2,
    'the rule is pid 2 of its own pid namespace',
  )
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
    t.match(err, {
      code: 'Unavailable',
      status: 503,
      message:
        /Python tests cannot run: python.command '.*python3.*' (was not found on the server's PATH|is not an executable file)/,
    })
    await t.rejects(checkPythonModule(exampleRule(), ctx), { code: 'Unavailable', status: 503 })
    t.same(pool.pids(), [])
  }
})

t.test('python3 absent from the server PATH: 503, and nothing was started', async (t) => {
  const { engine, pool } = createPythonEngine({
    command: 'python3',
    poolSize: 1,
    timeoutMs: 5000,
    serverEnv: { PATH: '/nonexistent-bin:/also-missing' },
  })
  t.teardown(() => pool.close())
  const outcome = engine.runTests(exampleRule(), ctx)
  await t.rejects(outcome, {
    code: 'Unavailable',
    status: 503,
    message: /python.command 'python3' was not found on the server's PATH/,
  })
  t.same(childPids(), [])
})

t.test('a command that is not Python is unavailable too', async (t) => {
  const { engine, pool } = createPythonEngine({ command: '/bin/false', poolSize: 1, timeoutMs: 5000 })
  t.teardown(() => pool.close())
  await t.rejects(engine.runTests(exampleRule(), ctx), {
    code: 'Unavailable',
    message: /exited with code 1 when asked for its version/,
  })
})
