// The seccomp filter of a rule run, as the classic-BPF program bubblewrap loads (`--seccomp FD`)
// right before it starts the interpreter. A deny-list on top of the namespaces: calls a rule never
// needs answer EPERM (Python raises PermissionError, so a test fails with a clear message), clone3
// answers ENOSYS (libc then uses clone, whose flags the filter can read), and a call from another
// architecture's table kills the process. Written by hand because no Node binding of libseccomp
// installs offline; the program is ~130 instructions of the simplest form (compare, return), and
// the numbers it uses are checked against libseccomp's own table by the tests.
import { AUDIT_ARCH, DENIED, RESTRICTED, type SandboxArch } from './syscalls.js'

const LD_W_ABS = 0x20
const JEQ_K = 0x15
const JGE_K = 0x35
const JSET_K = 0x45
const RET_K = 0x06

const RET_KILL_PROCESS = 0x80000000
const RET_ALLOW = 0x7fff0000
const retErrno = (errno: number) => 0x00050000 | (errno & 0xffff)
const EPERM = 1
const ENOSYS = 38

// struct seccomp_data: nr (u32) at 0, arch (u32) at 4, instruction pointer (u64) at 8, args (u64 × 6)
// from 16; on these little-endian architectures the low word of args[0] is at 16.
const OFFSET_NR = 0
const OFFSET_ARCH = 4
const OFFSET_ARG0_LOW = 16
const X32_SYSCALL_BIT = 0x40000000
const CLONE_THREAD = 0x00010000
/** The interpreter's pid inside the run's pid namespace (bubblewrap's reaper is 1). */
export const RUN_PID = 2

interface Insn {
  code: number
  jt: number
  jf: number
  k: number
}

const stmt = (code: number, k: number): Insn => ({ code, jt: 0, jf: 0, k })
const jump = (code: number, k: number, jt: number, jf: number): Insn => ({ code, jt, jf, k })

/** The filter as instructions (exported for the tests, which interpret it). */
export function filterProgram(arch: SandboxArch): Insn[] {
  const p: Insn[] = [
    stmt(LD_W_ABS, OFFSET_ARCH),
    jump(JEQ_K, AUDIT_ARCH[arch], 1, 0),
    stmt(RET_K, RET_KILL_PROCESS),
    stmt(LD_W_ABS, OFFSET_NR),
  ]
  if (arch === 'x86_64') p.push(jump(JGE_K, X32_SYSCALL_BIT, 0, 1), stmt(RET_K, retErrno(EPERM)))
  for (const numbers of Object.values(DENIED)) {
    const nr = numbers[arch]
    if (nr !== null) p.push(jump(JEQ_K, nr, 0, 1), stmt(RET_K, retErrno(EPERM)))
  }
  p.push(jump(JEQ_K, RESTRICTED.clone3[arch], 0, 1), stmt(RET_K, retErrno(ENOSYS)))
  // Each restricted call: when nr matches, load args[0] and decide; every branch returns, so the
  // accumulator holding args[0] never reaches the next comparison of nr.
  const onArg0 = (nr: number, test: Insn) =>
    p.push(
      jump(JEQ_K, nr, 0, 4),
      stmt(LD_W_ABS, OFFSET_ARG0_LOW),
      test,
      stmt(RET_K, RET_ALLOW),
      stmt(RET_K, retErrno(EPERM)),
    )
  onArg0(RESTRICTED.clone[arch], jump(JSET_K, CLONE_THREAD, 0, 1))
  onArg0(RESTRICTED.kill[arch], jump(JEQ_K, RUN_PID, 0, 1))
  onArg0(RESTRICTED.tgkill[arch], jump(JEQ_K, RUN_PID, 0, 1))
  p.push(stmt(RET_K, RET_ALLOW))
  return p
}

/** The filter in the binary form bubblewrap reads: struct sock_filter[], native (little) endian. */
export function compileFilter(arch: SandboxArch): Buffer {
  const program = filterProgram(arch)
  const out = Buffer.alloc(program.length * 8)
  program.forEach((insn, i) => {
    out.writeUInt16LE(insn.code, i * 8)
    out.writeUInt8(insn.jt, i * 8 + 2)
    out.writeUInt8(insn.jf, i * 8 + 3)
    out.writeUInt32LE(insn.k >>> 0, i * 8 + 4)
  })
  return out
}
