// Hostile rule code, one test each, all in ONE run beside well-behaved tests: an endless loop,
// unbounded allocation, reading the environment and the server's /proc environ, writing outside the
// scratch directory, os._exit, a segfault, fork bombs, printing 100 MB. Each fails its own test with
// a clear error (or, for the secret readers, finds nothing), the good tests still pass, and the
// same worker keeps serving afterwards.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { createPythonEngine } from '../../../src/engine/python/index.js'
import { contextWith, exampleGlobal, exampleRule, inlineRule, type InlineTest } from './fixtures.js'

const SECRET = `hunter2-${process.pid}`
process.env.RK_TEST_SECRET = SECRET // what a server secret looks like: in the server's environment

const { engine, pool } = createPythonEngine({ command: 'python3', poolSize: 1, timeoutMs: 1500, memoryBytes: 256 * 1024 * 1024 })
t.teardown(() => pool.close())

const outside = mkdtempSync(join(tmpdir(), 'rk-outside-'))
t.teardown(() => rmSync(outside, { recursive: true, force: true }))
const escapeFile = join(outside, 'escaped.txt')
const ctypesFile = join(outside, 'escaped-ctypes.txt')
const secretFile = join(outside, 'server-secret.txt')
writeFileSync(secretFile, SECRET)

const SOURCE = `
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
FORKED = []

def rule(event):
    k = event.get("k")
    if k == "ok":
        print("fine")
        return True
    if k == "scratch":
        with open("note.txt", "w") as f:
            f.write("kept in the scratch directory")
        return open("note.txt").read().startswith("kept")
    if k == "loop":
        while True:
            pass
    if k == "alloc":
        hoard = []
        while True:
            hoard.append(bytearray(16 * 1024 * 1024))
    if k == "environ":
        return ${JSON.stringify(SECRET)} in repr(dict(os.environ))
    if k == "proc-environ":
        return open("/proc/${process.pid}/environ", "rb").read().find(b"RK_TEST_SECRET") >= 0
    if k == "proc-environ-ctypes":
        fd = libc.open(b"/proc/${process.pid}/environ", 0)
        if fd < 0:
            return False
        return os.read(fd, 1 << 20).find(b"RK_TEST_SECRET") >= 0
    if k == "rlimit":
        import resource
        resource.setrlimit(resource.RLIMIT_CPU, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        return True
    if k == "read":
        return len(open(${JSON.stringify(secretFile)}).read()) > 0
    if k == "write":
        open(${JSON.stringify(escapeFile)}, "w").write("escaped")
        return True
    if k == "write-ctypes":
        return libc.open(${JSON.stringify(ctypesFile)}.encode(), os.O_WRONLY | os.O_CREAT, 0o644) >= 0
    if k == "exit":
        os._exit(3)
    if k == "segfault":
        ctypes.string_at(0)
    if k == "forkbomb":
        while True:
            os.fork()
    if k == "forkbomb-ctypes":
        for _ in range(20):
            pid = libc.fork()
            if pid == 0:
                libc.pause()
            FORKED.append(pid)
        return True
    if k == "print":
        print("x" * 100_000_000)
        return True
    if k == "fd-print":
        while True:
            os.write(1, b"y" * 65536)
    return False

def alert_context(event):
    return {"forked": FORKED}
`

const HOSTILE: Array<InlineTest & { error?: RegExp }> = [
  { name: 'ok before', expected: true, log: { k: 'ok' } },
  { name: 'scratch directory is writable', expected: true, log: { k: 'scratch' } },
  { name: 'endless loop', expected: true, log: { k: 'loop' }, error: /timed out after 1500 ms/ },
  { name: 'ok after a timeout', expected: true, log: { k: 'ok' } },
  { name: 'unbounded allocation', expected: true, log: { k: 'alloc' }, error: /MemoryError|out of memory|timed out/ },
  { name: 'os.environ holds no secret', expected: false, log: { k: 'environ' } },
  { name: "the server's /proc environ is refused", expected: true, log: { k: 'proc-environ' }, error: /may not read other processes' \/proc entries/ },
  { name: 'raising its own limits', expected: true, log: { k: 'rlimit' }, error: /may not change resource limits/ },
  { name: 'reading a file of the server', expected: true, log: { k: 'read' }, error: /may not read files outside its scratch directory/ },
  { name: 'writing outside the scratch directory', expected: true, log: { k: 'write' }, error: /may not write outside its scratch directory/ },
  { name: 'os._exit', expected: true, log: { k: 'exit' }, error: /exited with code 3/ },
  { name: 'ok after an exit', expected: true, log: { k: 'ok' } },
  { name: 'segfault through ctypes', expected: true, log: { k: 'segfault' }, error: /SIGSEGV/ },
  { name: 'fork bomb', expected: true, log: { k: 'forkbomb' }, error: /may not start processes/ },
  { name: 'printing 100 MB', expected: true, log: { k: 'print' }, error: /output limit/ },
  { name: 'flooding fd 1 below Python', expected: true, log: { k: 'fd-print' }, error: /output limit/ },
  { name: 'flooding fd 1 fails an expected-false test too', expected: false, log: { k: 'fd-print' }, error: /output limit/ },
  { name: 'ok at the end', expected: true, log: { k: 'ok' } },
]

t.test('each hostile test fails with a clear error; the good ones in the same run pass', async (t) => {
  const started = Date.now()
  const outcomes = await engine.runTests(inlineRule(SOURCE, HOSTILE), contextWith())
  t.ok(Date.now() - started < 20_000, 'bounded time')
  t.equal(outcomes.length, HOSTILE.length)
  HOSTILE.forEach((h, i) => {
    const o = outcomes[i]!
    if (h.error) {
      t.equal(o.passed, false, `${h.name}: fails`)
      t.match(o.error, h.error, `${h.name}: says why`)
      t.equal(o.errored, true, `${h.name}: errored`)
    } else {
      t.equal(o.passed, true, `${h.name}: passes (${o.error})`)
    }
  })
  t.match(outcomes[0]!, { functions: { detection: { output: true, error: null } }, output: { stdout: 'fine\n' } })
  t.match(outcomes[2]!.functions, { detection: { output: null, error: /timed out/ } }, 'the timeout is charged to rule()')
  t.notOk(existsSync(escapeFile), 'nothing was written outside')
})

t.test('what the kernel enforces below the audit hook', async (t) => {
  const info = await pool.describe()
  t.comment(`isolation on this machine: ${JSON.stringify(info.isolation)}`)
  const tests: InlineTest[] = [
    { name: 'ctypes reads the server environ', expected: false, log: { k: 'proc-environ-ctypes' } },
    { name: 'ctypes writes outside', expected: false, log: { k: 'write-ctypes' } },
    { name: 'ctypes fork bomb', expected: true, log: { k: 'forkbomb-ctypes' } },
  ]
  const outcomes = await engine.runTests(inlineRule(SOURCE, tests), contextWith())
  if (!info.isolation?.user.startsWith('uid 65534')) {
    t.comment('SKIP: the workers run as the server uid here; only the audit hook and the process group protect')
    return
  }
  t.equal(outcomes[0]!.passed, true, 'another uid cannot read the server environ')
  t.equal(outcomes[1]!.passed, true, 'another uid cannot write root-owned directories')
  t.notOk(existsSync(ctypesFile))
  const forked = (outcomes[2]!.functions?.alertContext?.output as { forked: number[] }).forked
  t.ok(forked.length === 20, 'twenty fork attempts')
  t.ok(forked.every((pid) => pid === -1), 'RLIMIT_NPROC binds for uid 65534: the kernel refused every fork')
})

t.test('the same worker serves the next rule, unharmed', async (t) => {
  const before = pool.pids()
  t.equal(before.length, 1)
  const outcomes = await engine.runTests(exampleRule(), contextWith(exampleGlobal()))
  t.ok(outcomes.every((o) => o.passed === true))
  t.same(pool.pids(), before, 'no worker had to be replaced')
})

t.test('a worker killed from outside is replaced on the next run', async (t) => {
  const [pid] = pool.pids()
  process.kill(pid!, 'SIGKILL')
  await new Promise((r) => setTimeout(r, 100))
  const outcomes = await engine.runTests(exampleRule(), contextWith(exampleGlobal()))
  t.ok(outcomes.every((o) => o.passed === true))
  t.equal(pool.pids().length, 1)
  t.not(pool.pids()[0], pid)
})
