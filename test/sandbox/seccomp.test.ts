// The seccomp filter's numbers and decisions: every syscall number in syscalls.ts is checked
// against libseccomp's own table (scmp_sys_resolver, Debian's `seccomp` package), and the compiled
// program is run through a small classic-BPF interpreter to show what it answers for the calls
// that matter (a read is allowed, a socket refused, a thread allowed but a process refused, a
// signal only to the run itself, an i386 call from x86_64 killed).
import { execFileSync } from 'node:child_process'
import t from 'tap'
import { compileFilter, filterProgram, RUN_PID } from '../../src/sandbox/seccomp.js'
import { AUDIT_ARCH, DENIED, RESTRICTED, type SandboxArch } from '../../src/sandbox/syscalls.js'

function resolver(): boolean {
  try {
    execFileSync('scmp_sys_resolver', ['-a', 'x86_64', 'read'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

t.test(
  'every number is the kernel ABI libseccomp knows',
  { skip: !resolver() && 'scmp_sys_resolver is not installed (.ci/run installs it)' },
  async (t) => {
    const names = [...Object.keys(DENIED), ...Object.keys(RESTRICTED)]
    for (const arch of ['x86_64', 'aarch64'] as SandboxArch[]) {
      names.forEach((name) => {
        const resolved = Number(execFileSync('scmp_sys_resolver', ['-a', arch, name], { encoding: 'utf8' }).trim())
        const ours = name in DENIED ? DENIED[name]![arch] : RESTRICTED[name as keyof typeof RESTRICTED][arch]
        t.equal(ours, resolved < 0 ? null : resolved, `${name} on ${arch}`)
      })
    }
  },
)

/** Runs a classic-BPF seccomp program over one seccomp_data. */
function run(arch: SandboxArch, nr: number, args: number[] = [], archValue = AUDIT_ARCH[arch]): number {
  const data = Buffer.alloc(64)
  data.writeUInt32LE(nr, 0)
  data.writeUInt32LE(archValue >>> 0, 4)
  for (const [i, a] of args.entries()) data.writeBigInt64LE(BigInt(a), 16 + 8 * i)
  const prog = compileFilter(arch)
  let acc = 0
  for (let pc = 0; pc < prog.length / 8; ) {
    const code = prog.readUInt16LE(pc * 8)
    const jt = prog.readUInt8(pc * 8 + 2)
    const jf = prog.readUInt8(pc * 8 + 3)
    const k = prog.readUInt32LE(pc * 8 + 4)
    if (code === 0x20) acc = data.readUInt32LE(k)
    else if (code === 0x06) return k
    else if (code === 0x15) {
      pc += 1 + (acc === k ? jt : jf)
      continue
    } else if (code === 0x35) {
      pc += 1 + (acc >= k ? jt : jf)
      continue
    } else if (code === 0x45) {
      pc += 1 + ((acc & k) !== 0 ? jt : jf)
      continue
    } else throw new Error(`unknown instruction ${code}`)
    pc++
  }
  throw new Error('fell off the end of the program')
}

const ALLOW = 0x7fff0000
const EPERM = 0x00050001
const ENOSYS = 0x00050026
const KILL = 0x80000000

for (const arch of ['x86_64', 'aarch64'] as SandboxArch[]) {
  t.test(`decisions on ${arch}`, async (t) => {
    const read = arch === 'x86_64' ? 0 : 63
    t.equal(run(arch, read), ALLOW, 'read is allowed')
    t.equal(run(arch, DENIED.socket![arch]!), EPERM, 'socket is refused')
    t.equal(run(arch, DENIED.ptrace![arch]!), EPERM, 'ptrace is refused')
    t.equal(run(arch, DENIED.io_uring_setup![arch]!), EPERM, 'io_uring is refused')
    t.equal(run(arch, RESTRICTED.clone3[arch]), ENOSYS, 'clone3 says ENOSYS so libc falls back to clone')
    t.equal(run(arch, RESTRICTED.clone[arch], [0x3d0f00]), ALLOW, 'clone of a thread (glibc pthread flags)')
    t.equal(run(arch, RESTRICTED.clone[arch], [17]), EPERM, 'clone of a process (SIGCHLD)')
    t.equal(run(arch, RESTRICTED.clone[arch], [0x4111]), EPERM, 'vfork-style clone')
    t.equal(run(arch, RESTRICTED.kill[arch], [RUN_PID, 9]), ALLOW, 'kill of itself')
    t.equal(run(arch, RESTRICTED.kill[arch], [1, 9]), EPERM, 'kill of the sandbox init')
    t.equal(run(arch, RESTRICTED.kill[arch], [-1, 9]), EPERM, 'kill of everything')
    t.equal(run(arch, RESTRICTED.kill[arch], [0, 9]), EPERM, 'kill of the process group')
    t.equal(run(arch, RESTRICTED.tgkill[arch], [RUN_PID, RUN_PID, 6]), ALLOW, 'raise() / abort()')
    t.equal(run(arch, RESTRICTED.tgkill[arch], [1, 1, 9]), EPERM, 'tgkill of another process')
    t.equal(run(arch, RESTRICTED.execve[arch]), ALLOW, 'execve stays allowed for bwrap itself (the runner forbids it)')
    t.equal(run(arch, read, [], 0x40000003), KILL, 'a call of another architecture kills the process')
    if (arch === 'x86_64') t.equal(run(arch, 0x40000000 + 41), EPERM, 'x32 calls are refused')
  })
}

t.test('the program fits the kernel limit and bwrap reads it whole', async (t) => {
  for (const arch of ['x86_64', 'aarch64'] as SandboxArch[]) {
    const n = filterProgram(arch).length
    t.ok(n > 50 && n < 4096, `${n} instructions (BPF_MAXINSNS is 4096)`)
    t.equal(compileFilter(arch).length, n * 8)
  }
})
