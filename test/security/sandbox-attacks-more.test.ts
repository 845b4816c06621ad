// The second attack pass on the rule sandbox (docs/security.md, attacks 16 and on): what arbitrary
// Python with ctypes tried after the first suite held — inherited descriptors, writable corners of
// /dev, kernel memory and tasks outside the address-space limit, raw syscalls the deny-list did
// not name, and lies on the result pipe. One attack per test against a real server (as root and as
// an ordinary user); each rule returns True when its attack worked, so 204 means the boundary held.
// Every server here is started with a descriptor of its data directory left open and inheritable
// (fd 9, as a careless init script, `flock 9`, or a CI runner would leave it) to show the run never
// sees it.
// Real port: a second process (a real `rulekeeper serve`, as root or an ordinary user).
import t, { type Test } from 'tap'
import { attackHarness, isRoot, ordinaryUserUnavailable, startTarget, type Target } from './sandbox-fixture.js'

/** Starts the server with its data directory open as an inheritable fd 9. */
const LEAK_FD = 9
const leakWrap = (dataDir: string) => [
  '/usr/bin/python3',
  '-c',
  'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY); os.dup2(fd, 9); os.execvp(sys.argv[2], sys.argv[2:])',
  dataDir,
]

const PRELUDE = `import os, sys, ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
X86 = os.uname().machine == "x86_64"
`

function attackTests(t: Test, target: () => Target): void {
  const { held, unharmed } = attackHarness(t, target, PRELUDE)

  t.test('no descriptor the server inherited reaches the run (its data directory open as fd 9)', (t) =>
    held(
      t,
      `
def rule(event):
    for fd in os.listdir("/proc/self/fd"):
        if int(fd) > 3:
            try:
                link = os.readlink("/proc/self/fd/" + fd)
            except OSError:
                continue
            if link != "/dev/null":
                print("open:", fd, link)
                return True
    try:
        os.listdir(${LEAK_FD})
        return True
    except OSError:
        pass
    try:
        os.open("tokens.json", os.O_RDONLY, dir_fd=${LEAK_FD})
        return True
    except OSError:
        return False
`,
      'only stdio, the result pipe and /dev/null are open',
    ),
  )

  t.test('/dev and /dev/shm are not writable (an unbounded tmpfs outside the scratch size)', (t) =>
    held(
      t,
      `
def rule(event):
    wrote = []
    for d in ("/dev", "/dev/shm", "/dev/pts"):
        try:
            with open(os.path.join(d, "planted"), "wb") as f:
                f.write(b"x" * 4096)
            wrote.append(d)
        except OSError:
            pass
    return bool(wrote)
`,
      'nothing written under /dev',
    ),
  )

  t.test('raw clone threads cannot fill the host pid table (a task limit per run)', (t) =>
    held(
      t,
      `
def rule(event):
    # Threads that cost the run 4 KiB of stack each and the host one pid each: clone(CLONE_THREAD)
    # returning into pause(). 400 is far below the host's pid_max but far above what a rule needs.
    pause = ctypes.cast(libc.pause, ctypes.c_void_p).value
    slot, n = 4096, 400
    stacks = ctypes.create_string_buffer(slot * n + 64)
    base = (ctypes.addressof(stacks) + 15) & ~15
    flags = 0x100 | 0x200 | 0x400 | 0x800 | 0x10000  # CLONE_VM FS FILES SIGHAND THREAD
    made = 0
    for i in range(n):
        top = base + slot * (i + 1) - 64
        ctypes.c_void_p.from_address(top).value = pause
        ctypes.c_void_p.from_address(top + 8).value = pause
        if libc.syscall(ctypes.c_long(56 if X86 else 220), ctypes.c_long(flags), ctypes.c_void_p(top), None, None, None) < 0:
            break
        made += 1
    globals()["_keep"] = stacks
    print("threads made:", made)
    return made > 128
`,
      'at most a few dozen tasks',
    ),
  )

  t.test('ordinary Python threads stop at the task limit too', (t) =>
    held(
      t,
      `
import threading
def rule(event):
    threading.stack_size(64 * 1024)
    stop = threading.Event()
    made = 0
    try:
        for _ in range(300):
            threading.Thread(target=stop.wait, daemon=True).start()
            made += 1
    except RuntimeError:
        pass
    stop.set()
    return made > 128 or made < 8
`,
      'some threads, not hundreds',
    ),
  )

  t.test('System V IPC cannot hold memory outside the address-space limit', (t) =>
    held(
      t,
      `
def rule(event):
    made = []
    if libc.shmget(0, 64 << 20, 0o1600) >= 0: made.append("shm")
    if libc.msgget(0, 0o1600) >= 0: made.append("msg")
    if libc.semget(0, 1, 0o1600) >= 0: made.append("sem")
    return bool(made)
`,
      'shmget, msgget and semget refused',
    ),
  )

  t.test('memfd_create is refused (files in memory outside the scratch size)', (t) =>
    held(
      t,
      `
def rule(event):
    try:
        os.memfd_create("hoard")
        return True
    except OSError:
        return False
`,
      'no memfd',
    ),
  )

  t.test('ctypes callbacks still work (libffi closures need no memfd)', async (t) => {
    const res = await target().attack(
      PRELUDE +
        `
def rule(event):
    CMP = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))
    arr = (ctypes.c_int * 4)(3, 1, 4, 2)
    libc.qsort(arr, 4, ctypes.sizeof(ctypes.c_int), CMP(lambda a, b: a[0] - b[0]))
    return list(arr) == [1, 2, 3, 4]
`,
      { expected: true, name: 'qsort through a Python callback' },
    )
    t.equal(res.status, 204, JSON.stringify(res.body))
  })

  t.test('namespaces through clone(CLONE_THREAD | CLONE_NEW*) are refused', (t) =>
    held(
      t,
      `
def rule(event):
    base = 0x100 | 0x800 | 0x10000  # CLONE_VM SIGHAND THREAD
    got = []
    for ns in (0x10000000, 0x00020000, 0x40000000, 0x08000000, 0x04000000, 0x02000000, 0x20000000):
        stack = ctypes.create_string_buffer(8192)
        top = (ctypes.addressof(stack) + 8192 - 64) & ~15
        ctypes.c_void_p.from_address(top).value = ctypes.cast(libc.pause, ctypes.c_void_p).value
        if libc.syscall(ctypes.c_long(56 if X86 else 220), ctypes.c_long(base | ns), ctypes.c_void_p(top), None, None, None) >= 0:
            got.append(hex(ns))
        globals().setdefault("_keep", []).append(stack)
    return bool(got)
`,
      'no namespace made',
    ),
  )

  t.test('no terminal to inject input into (TIOCSTI on /dev/tty and inherited descriptors)', (t) =>
    held(
      t,
      `
import fcntl, termios
def rule(event):
    for path in ("/dev/tty", "/dev/console", "/dev/tty0"):
        try:
            fd = os.open(path, os.O_RDWR)
        except OSError:
            continue
        try:
            fcntl.ioctl(fd, termios.TIOCSTI, b"x")
            return True
        except OSError:
            pass
    for fd in range(0, 64):
        try:
            if os.isatty(fd):
                fcntl.ioctl(fd, termios.TIOCSTI, b"x")
                return True
        except OSError:
            pass
    return False
`,
      'no terminal reached',
    ),
  )

  t.test('the result pipe cannot keep a run alive past its tests (forged test markers)', async (t) => {
    const started = Date.now()
    const res = await target().attack(
      PRELUDE +
        `
import time
def rule(event):
    for i in range(1, 4):
        os.write(3, b'{"t":"test","i":%d}\\n' % i)
        time.sleep(3)
    return False
`,
    )
    const ms = Date.now() - started
    t.equal(res.status, 400, 'the forging run fails its own test')
    t.ok(ms < 8000, `stopped at the first forged marker, not after 4 × 3 s (${ms} ms)`)
    await unharmed(t)
  })

  t.test('hostile values in forged events do not crash the verdict (objects where text is expected)', async (t) => {
    const res = await target().attack(
      PRELUDE +
        `
def rule(event):
    bad = b'{"toString":1,"valueOf":1}'
    os.write(3, b'{"t":"import_error","message":' + bad + b',"file":' + bad + b',"line":' + bad + b'}\\n')
    os.write(3, b'{"t":"mock_error","message":' + bad + b'}\\n')
    os.write(3, b'{"t":"start","fn":' + bad + b'}\\n')
    os.write(3, b'{"t":"end","stdout":' + bad + b',"stderr":' + bad + b',"outputChars":' + bad + b',"outputExceeded":true}\\n')
    return False
`,
    )
    t.equal(res.status, 400, `the forger gets its own failed verdict, not a 500: ${JSON.stringify(res.body)}`)
    await unharmed(t)
  })

  t.test(
    '32-bit system calls (int 0x80) kill the run instead of reaching the i386 table',
    { skip: process.arch !== 'x64' && 'x86-64 only' },
    async (t) => {
      const res = await target().attack(
        PRELUDE +
          `
import mmap
def rule(event):
    # mov eax, 20 (getpid in the i386 table); int 0x80; ret
    code = bytes([0xB8, 20, 0, 0, 0, 0xCD, 0x80, 0xC3])
    page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(code)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(page))
    ctypes.CFUNCTYPE(ctypes.c_int)(addr)()
    return True
`,
      )
      t.equal(res.status, 400, 'the run was killed, so its test failed')
      t.match(JSON.stringify(res.body), /SIGSYS|system call the sandbox forbids/, 'by the filter (SIGSYS)')
      await unharmed(t)
    },
  )
}

const modes: Array<{ name: string; mode: 'root' | 'user'; skip?: string }> = isRoot()
  ? [
      { name: 'as root, Python under /root', mode: 'root' },
      { name: 'as an ordinary user', mode: 'user', skip: ordinaryUserUnavailable() },
    ]
  : [{ name: 'as the user running the suite', mode: 'root' }]
for (const m of modes) {
  t.test(m.name, { skip: m.skip ?? false }, async (t) => {
    let target: Target | undefined
    t.before(async () => {
      target = await startTarget(m.mode, { wrapFor: leakWrap })
    })
    t.teardown(async () => {
      await target?.server.stop()
    })
    attackTests(t, () => target!)
  })
}
