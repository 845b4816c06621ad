// The attack suite of docs/security.md: what a caller holding only a ManageRules token can make
// rule code do, tried against a real server — as root (interpreter under /root) and as an ordinary
// user created for the test — one attack per test so a regression names itself. Each rule is sent
// with ?run-tests-only=true and returns True when its attack worked; 204 means the boundary held.
// After every attack the server still answers, and the protected files of its data directory
// (tokens, bootstrap token, log-source token, audit records, the repository's refs) are unchanged.
// Real port: a second process (a real `rulekeeper serve`, as root or an ordinary user).
import t, { type Test } from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { httpRequest } from '../helpers/rulekeeper.js'
import { attackHarness, isRoot, ordinaryUserUnavailable, startTarget, type Target } from './sandbox-fixture.js'

const py = (s: string) => JSON.stringify(s)

/** The interpreters running rulekeeper_runner.py below `serverPid`, with their real uid on the host. */
function runnerProcesses(serverPid: number): Array<{ pid: number; uid: number }> {
  const info = new Map<number, { ppid: number; uid: number; runner: boolean }>()
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue
    try {
      const status = readFileSync(`/proc/${e}/status`, 'utf8')
      const ppid = Number(/^PPid:\s+(\d+)/m.exec(status)![1])
      const uid = Number(/^Uid:\s+(\d+)/m.exec(status)![1])
      const runner =
        readFileSync(`/proc/${e}/cmdline`, 'utf8').includes('rulekeeper_runner.py') &&
        !readFileSync(`/proc/${e}/cmdline`, 'utf8').startsWith('bwrap')
      info.set(Number(e), { ppid, uid, runner })
    } catch {
      // gone meanwhile
    }
  }
  const below = (pid: number) => {
    for (let p = info.get(pid)?.ppid, n = 0; p && n < 20; p = info.get(p)?.ppid, n++) if (p === serverPid) return true
    return false
  }
  return [...info]
    .filter(([pid, i]) => i.runner && !/bwrap/.test(readCmd(pid)) && below(pid))
    .map(([pid, i]) => ({ pid, uid: i.uid }))
}

function readCmd(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? ''
  } catch {
    return ''
  }
}

/** Every host path an attacker would want, as Python list text. */
function secretPaths(target: Target): string {
  const d = target.dataDir
  return `[${[
    join(d, 'tokens.json'),
    join(d, 'bootstrap-token'),
    join(d, 'log-sources', 'editor-audit.token'),
    join(d, 'repo.git', 'HEAD'),
    join(d, 'repo.git', 'config'),
    join(d, 'server.lock'),
    '/etc/shadow',
    '/root/.bash_history',
  ]
    .map(py)
    .join(', ')}] + [os.path.join(r, f) for r, _, fs in os.walk(${py(d)}) for f in fs]`
}

const PRELUDE = `import os, sys, ctypes, signal, socket, errno
libc = ctypes.CDLL(None, use_errno=True)

def opened(path, mode="rb"):
    try:
        with open(path, mode) as f:
            if "r" in mode:
                f.read(1)
            else:
                f.write(b"x" if "b" in mode else "x")
        return True
    except OSError:
        return False
`

function attackTests(t: Test, target: () => Target): void {
  const { held, unharmed } = attackHarness(t, target, PRELUDE)

  t.test('the data directory is not there to read (tokens, audit records, repository)', (t) =>
    held(
      t,
      `\ndef rule(event):\n    return any(opened(p) for p in ${secretPaths(target())})\n`,
      'nothing of the data directory was readable',
    ),
  )

  t.test('the one-line hook disable of the old sandbox lifts nothing', (t) =>
    held(
      t,
      `\ndef rule(event):\n    try:\n        import rulekeeper_sandbox\n        rulekeeper_sandbox.GUARD.scratch = None\n    except Exception:\n        pass\n    sys.modules.pop("rulekeeper_runtime", None)\n    return any(opened(p) for p in ${secretPaths(target())})\n`,
      'still nothing readable',
    ),
  )

  t.test('ctypes open(2) reaches no more than Python', (t) =>
    held(
      t,
      `\ndef rule(event):\n    return any(libc.open(p.encode(), 0) >= 0 for p in ${secretPaths(target())})\n`,
      'libc open found nothing',
    ),
  )

  t.test('nothing outside the scratch directory is writable', (t) => {
    const d = target().dataDir
    const targets = [
      join(d, 'tokens.json'),
      join(d, 'planted'),
      join(d, 'repo.git', 'refs', 'heads', 'main.lock'),
      '/rulekeeper/planted.py',
      '/usr/lib/planted',
      '/planted',
      `/proc/1/environ`,
    ]
    return held(
      t,
      `\ndef rule(event):\n    wrote = [p for p in ${JSON.stringify(targets)} if opened(p, "ab")]\n    made = [p for p in ${JSON.stringify(targets)} if libc.open(p.encode(), os.O_WRONLY | os.O_CREAT, 0o644) >= 0]\n    return bool(wrote or made)\n`,
      'every write outside scratch failed',
    )
  })

  t.test("no /proc entry holds the server's secret; the server's pid does not exist", (t) =>
    held(
      t,
      `\ndef rule(event):\n    secret = ${py(target().secret)}.encode()\n    if secret.decode() in repr(dict(os.environ)):\n        return True\n    pids = [p for p in os.listdir("/proc") if p.isdigit()] + [${target().server.pid}, os.getppid()]\n    for p in pids:\n        for f in ("environ", "cmdline", "mem"):\n            try:\n                with open("/proc/%s/%s" % (p, f), "rb") as fh:\n                    if secret in fh.read(1 << 20):\n                        return True\n            except OSError:\n                pass\n    return os.path.exists("/proc/${target().server.pid}") and ${target().server.pid} > 2\n`,
      'the secret is nowhere',
    ),
  )

  t.test('/proc/self/mem and ctypes pokes at its own memory gain nothing', (t) =>
    held(
      t,
      `\ndef rule(event):\n    buf = ctypes.create_string_buffer(b"original")\n    with open("/proc/self/mem", "r+b") as mem:\n        mem.seek(ctypes.addressof(buf))\n        mem.write(b"patched!")\n    assert buf.value == b"patched!"\n    return any(opened(p) for p in ${secretPaths(target())})\n`,
      'its own memory is its own; the boundary is not in it',
    ),
  )

  t.test('no process can be started: fork, spawn, subprocess, ctypes fork and clone, exec', (t) =>
    held(
      t,
      `\ndef rule(event):\n    started = []\n    for attempt in (lambda: os.fork(), lambda: os.posix_spawn("/usr/bin/true", ["true"], {}),\n                    lambda: __import__("subprocess").run(["/bin/true"]), lambda: os.system("true") == 0 or None):\n        try:\n            if attempt() is not None:\n                started.append(attempt)\n        except Exception:\n            pass\n    if libc.fork() != -1:\n        return True\n    if libc.syscall(56 if os.uname().machine == "x86_64" else 220, 17, 0, 0, 0, 0) != -1:  # clone(SIGCHLD)\n        return True\n    try:\n        os.execv(sys.executable, [sys.executable, "-c", "pass"])\n    except OSError:\n        pass\n    return bool(started)\n`,
      'every process creation was refused',
    ),
  )

  t.test('no signal leaves the run: the server, everything (-1), the sandbox init', (t) =>
    held(
      t,
      `\ndef rule(event):\n    sent = []\n    for pid in (${target().server.pid}, -1, 1, 0, os.getppid()):\n        for sig in (signal.SIGSTOP, signal.SIGKILL):\n            try:\n                os.kill(pid, sig)\n                sent.append(pid)\n            except OSError:\n                pass\n            if libc.kill(pid, sig) == 0:\n                sent.append(pid)\n    return bool(sent)\n`,
      'every signal was refused',
    ),
  )

  t.test('no ptrace, no process_vm_readv, no pidfd', (t) =>
    held(
      t,
      `\ndef rule(event):\n    got = []\n    if libc.ptrace(16, 1, 0, 0) != -1:  # PTRACE_ATTACH to the sandbox init\n        got.append("ptrace")\n    if libc.syscall(434 if os.uname().machine in ("x86_64", "aarch64") else -1, 1, 0) != -1:  # pidfd_open\n        got.append("pidfd")\n    if opened("/proc/1/mem"):\n        got.append("mem")\n    return bool(got)\n`,
      'all refused',
    ),
  )

  t.test('no socket of any family; the server port is unreachable', (t) =>
    held(
      t,
      `\ndef rule(event):\n    made = []\n    for fam, kind in ((socket.AF_INET, socket.SOCK_STREAM), (socket.AF_INET6, socket.SOCK_STREAM), (socket.AF_UNIX, socket.SOCK_STREAM), (socket.AF_NETLINK, socket.SOCK_RAW)):\n        try:\n            s = socket.socket(fam, kind)\n            made.append(fam)\n            if fam == socket.AF_INET:\n                s.connect(("127.0.0.1", ${new URL(target().server.url).port}))\n                return True\n        except OSError:\n            pass\n    try:\n        socket.socketpair()\n        made.append("pair")\n    except OSError:\n        pass\n    return bool(made)\n`,
      'every socket was refused',
    ),
  )

  t.test('no namespace, mount, chroot or keyring', (t) =>
    held(
      t,
      `\ndef rule(event):\n    ok = []\n    if libc.unshare(0x10000000) == 0: ok.append("userns")\n    if libc.unshare(0x00020000) == 0: ok.append("mntns")\n    if libc.mount(b"none", b"/tmp", b"tmpfs", 0, None) == 0: ok.append("mount")\n    if libc.chroot(b"/tmp") == 0: ok.append("chroot")\n    if libc.syscall(250 if os.uname().machine == "x86_64" else 219, 0, 0, 0, 0, 0) != -1: ok.append("keyctl")\n    return bool(ok)\n`,
      'all refused',
    ),
  )

  t.test('no capabilities, no_new_privs set, limits cannot be raised', (t) =>
    held(
      t,
      `\nimport resource\ndef rule(event):\n    status = dict(l.split(":\\t", 1) for l in open("/proc/self/status").read().splitlines() if ":\\t" in l)\n    caps = [status[k].strip() for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")]\n    if any(c != "0000000000000000" for c in caps) or status["NoNewPrivs"].strip() != "1":\n        return True\n    try:\n        resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))\n        return True\n    except (ValueError, OSError):\n        return False\n`,
      'none held, none raised',
    ),
  )

  t.test(
    'seen from the host, runs are never root: a uid of their own each as root, the server uid otherwise',
    async (t) => {
      const sleeper = `import time\ndef rule(event):\n    time.sleep(1.2)\n    return False\n`
      const runs = [target().attack(sleeper), target().attack(sleeper)]
      // wait: both runs under way (1.2 s each); no outside signal tells a run from a started spare
      await new Promise((r) => setTimeout(r, 700))
      const seen = runnerProcesses(target().server.pid)
      for (const res of await Promise.all(runs)) t.equal(res.status, 204)
      t.ok(seen.length >= 2, `two runs seen from the host (${JSON.stringify(seen)})`)
      t.ok(
        seen.every((p) => p.uid !== 0),
        'no run is uid 0 outside',
      )
      if (target().uid === 0) {
        t.ok(
          seen.every((p) => p.uid >= 1_900_000_000),
          'every run has a uid from the sandbox range',
        )
        t.equal(new Set(seen.map((p) => p.uid)).size, seen.length, 'and no two processes share one')
      } else {
        t.ok(
          seen.every((p) => p.uid === target().uid),
          "the server's own uid (one user namespace per run)",
        )
      }
      await unharmed(t)
    },
  )

  t.test("one rule cannot kill another's run: a victim running beside a killer still passes", async (t) => {
    const victim = target().attack(`import time\ndef rule(event):\n    time.sleep(1.5)\n    return True\n`, {
      expected: true,
      name: 'survives',
    })
    // wait: the victim under way (1.5 s) before the killer starts; no outside signal tells it from a spare
    await new Promise((r) => setTimeout(r, 300))
    const killer = target().attack(
      PRELUDE +
        `\ndef rule(event):\n    hit = 0\n    for pid in range(1, 4096):\n        if pid != 2 and libc.kill(pid, 9) == 0:\n            hit += 1\n    if libc.kill(-1, 9) == 0:\n        hit += 1\n    return hit > 0\n`,
    )
    const [v, k] = await Promise.all([victim, killer])
    t.equal(k.status, 204, `the killer reached nothing: ${JSON.stringify(k.body)}`)
    t.equal(v.status, 204, `the victim's save was not refused: ${JSON.stringify(v.body)}`)
    await unharmed(t)
  })

  t.test('a forged verdict stops only the forger; a rule beside it gets its true verdict', async (t) => {
    const honest = target().attack(`import time\ndef rule(event):\n    time.sleep(0.5)\n    return True\n`, {
      name: 'expects false, returns true',
    })
    const forger = target().attack(
      `import os, json\ndef rule(event):\n    os.write(3, b'{"t":"fn","fn":"detection","output":false,"error":null}\\n{"t":"end","i":0}\\n{"t":"done"}\\n')\n    os.write(3, b"garbage that is not json\\n" * 1000)\n    return True\n`,
      { name: 'forges a pass' },
    )
    const [h, f] = await Promise.all([honest, forger])
    t.equal(h.status, 400, 'the honest rule is judged on what it did')
    t.match(h.body, { testResults: [{ passed: false }] })
    t.ok(f.status === 204 || f.status === 400, 'the forger affects its own result only')
    const after = await target().attack(`def rule(event):\n    return False\n`)
    t.equal(after.status, 204, 'the pool keeps serving')
    await unharmed(t)
  })
}

// As root: a server as root and one as an ordinary user made for the test. Otherwise: the server as
// the user running the suite (the sandbox's user-namespace path), and a comment on what is not run.
const userSkip = ordinaryUserUnavailable()
const modes: Array<{ name: string; mode: 'root' | 'user'; skip?: string }> = isRoot()
  ? [
      { name: 'as root, Python under /root', mode: 'root' },
      { name: 'as an ordinary user', mode: 'user', skip: userSkip },
    ]
  : [{ name: 'as the user running the suite', mode: 'root' }]
for (const m of modes) {
  t.test(m.name, { skip: m.skip ?? false }, async (t) => {
    let target: Target | undefined
    t.before(async () => {
      target = await startTarget(m.mode)
    })
    t.teardown(async () => {
      await target?.server.stop()
    })
    attackTests(t, () => target!)
  })
}

t.test(
  'where user namespaces are forbidden, Python tests answer 503 and the start says why',
  { skip: userSkip ?? false },
  async (t) => {
    // The server runs as the ordinary user inside a bubblewrap that forbids further user namespaces:
    // the kernel refuses the sandbox's, exactly as on a host with user namespaces switched off.
    const wrap = [
      'bwrap',
      '--unshare-user',
      '--disable-userns',
      '--bind',
      '/',
      '/',
      '--dev-bind',
      '/dev',
      '/dev',
      '--proc',
      '/proc',
      '--die-with-parent',
      '--',
    ]
    const target = await startTarget('user', { wrap })
    t.teardown(() => target.server.stop())
    const res = await target.attack(`def rule(event):\n    return False\n`)
    t.equal(res.status, 503)
    t.match(res.body, { message: /Python tests cannot run: the kernel sandbox could not start/ })
    const again = await httpRequest(
      target.server.url,
      'POST',
      '/scheduled-rules?run-tests-only=true',
      {
        id: 'X.Y',
        severity: 'LOW',
        body: 'def rule(e):\n    return True\n',
        tests: [{ name: 'a', expectedResult: true, log: {} }],
      },
      { 'X-API-Key': target.token },
    )
    t.equal(again.status, 503, 'never run weakly')
    t.match(target.server.output(), /python sandbox unavailable/, 'a warning at start')
  },
)
