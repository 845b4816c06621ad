// Hostile rule code, one test each, all in ONE run beside well-behaved tests: an endless loop,
// unbounded allocation, reading the environment and the server's files and /proc entries, writing
// outside the scratch directory, os._exit, a segfault, fork bombs, printing 100 MB. Each fails its
// own test with a clear error (or, for the secret readers, finds nothing), the good tests in the
// same run still pass, and the pool keeps serving afterwards. The server-level attack suite, one
// attack per test against a real server as root and as an ordinary user, is test/security/.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { createPythonEngine } from '../../../src/engine/python/index.js'
import { waitFor } from '../../helpers/wait.js'
import { contextWith, exampleGlobal, exampleRule, inlineRule, type InlineTest } from './fixtures.js'

const SECRET = `hunter2-${process.pid}`
process.env.RK_TEST_SECRET = SECRET // what a server secret looks like: in the server's environment

const { engine, pool } = createPythonEngine({
  command: 'python3',
  poolSize: 1,
  timeoutMs: 1500,
  memoryBytes: 256 * 1024 * 1024,
})
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

def readable(path):
    try:
        with open(path, "rb") as f:
            return f.read().find(${JSON.stringify(SECRET)}.encode()) >= 0
    except OSError:
        return False

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
        return readable("/proc/${process.pid}/environ") or any(readable("/proc/%s/environ" % p) for p in os.listdir("/proc") if p.isdigit())
    if k == "proc-environ-ctypes":
        fd = libc.open(b"/proc/${process.pid}/environ", 0)
        return fd >= 0
    if k == "rlimit":
        import resource
        resource.setrlimit(resource.RLIMIT_CPU, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        return True
    if k == "read":
        return readable(${JSON.stringify(secretFile)})
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
  { name: "no /proc environ holds the server's secret", expected: false, log: { k: 'proc-environ' } },
  { name: "the server's /proc entry does not exist for the rule", expected: false, log: { k: 'proc-environ-ctypes' } },
  {
    name: 'raising its own limits',
    expected: true,
    log: { k: 'rlimit' },
    error: /ValueError: not allowed to raise maximum limit/,
  },
  { name: 'a file of the server is not there to read', expected: false, log: { k: 'read' } },
  {
    name: 'writing outside the scratch directory',
    expected: true,
    log: { k: 'write' },
    error: /FileNotFoundError|PermissionError|Read-only/,
  },
  { name: 'os._exit', expected: true, log: { k: 'exit' }, error: /exited with code 3/ },
  { name: 'ok after an exit', expected: true, log: { k: 'ok' } },
  { name: 'segfault through ctypes', expected: true, log: { k: 'segfault' }, error: /SIGSEGV/ },
  {
    name: 'fork bomb',
    expected: true,
    log: { k: 'forkbomb' },
    error: /PermissionError: \[Errno 1\] Operation not permitted/,
  },
  { name: 'printing 100 MB', expected: true, log: { k: 'print' }, error: /output limit/ },
  { name: 'flooding fd 1 below Python', expected: true, log: { k: 'fd-print' }, error: /output limit/ },
  {
    name: 'flooding fd 1 fails an expected-false test too',
    expected: false,
    log: { k: 'fd-print' },
    error: /output limit/,
  },
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
  t.match(
    outcomes[2]!.functions,
    { detection: { output: null, error: /timed out/ } },
    'the timeout is charged to rule()',
  )
  t.notOk(existsSync(escapeFile), 'nothing was written outside')
})

t.test('what the kernel refuses below Python: ctypes gets nothing further', async (t) => {
  const info = await pool.describe()
  t.comment(`isolation on this machine: ${JSON.stringify(info.isolation)}`)
  t.ok(info.isolation, 'the sandbox started')
  const tests: InlineTest[] = [
    { name: 'ctypes cannot even open the server environ', expected: false, log: { k: 'proc-environ-ctypes' } },
    { name: 'ctypes writes outside', expected: false, log: { k: 'write-ctypes' } },
    { name: 'ctypes fork bomb', expected: true, log: { k: 'forkbomb-ctypes' } },
  ]
  const outcomes = await engine.runTests(inlineRule(SOURCE, tests), contextWith())
  t.equal(outcomes[0]!.passed, true, 'the server environ is not there')
  t.equal(outcomes[1]!.passed, true, 'nothing outside the scratch directory is writable')
  t.notOk(existsSync(ctypesFile))
  const forked = (outcomes[2]!.functions!.alertContext!.output as { forked: number[] }).forked
  t.equal(forked.length, 20, 'twenty fork attempts')
  t.ok(
    forked.every((pid) => pid === -1),
    'seccomp refused every fork',
  )
})

t.test('the pool serves the next rule, unharmed', async (t) => {
  const outcomes = await engine.runTests(exampleRule(), contextWith(exampleGlobal()))
  t.ok(outcomes.every((o) => o.passed === true))
})

t.test('a sandbox killed from outside is replaced on the next run', async (t) => {
  await waitFor('a sandbox in the pool', () => pool.pids().length >= 1, 2000, 20).catch(() => {})
  const [pid] = pool.pids()
  process.kill(-pid!, 'SIGKILL')
  const gone = () => {
    try {
      process.kill(pid!, 0)
      return false
    } catch {
      return true
    }
  }
  await waitFor('the killed sandbox gone', gone, 5000, 10)
  const outcomes = await engine.runTests(exampleRule(), contextWith(exampleGlobal()))
  t.ok(outcomes.every((o) => o.passed === true))
  t.notOk(pool.pids().includes(pid!))
})
