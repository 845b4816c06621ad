// The system calls the rule sandbox refuses, by name, with their numbers on the two architectures
// rulekeeper runs on. The numbers are the kernel's ABI (arch/x86/entry/syscalls/syscall_64.tbl and
// include/uapi/asm-generic/unistd.h); test/sandbox/seccomp.test.ts checks every one against
// libseccomp's resolver (`scmp_sys_resolver`). `null`: the call does not exist on that architecture.

export type SandboxArch = 'x86_64' | 'aarch64'

/** Why each call is refused, grouped as docs/security.md describes them. */
export const DENIED: Record<string, { x86_64: number | null; aarch64: number | null; why: string }> = {
  // Process creation: one run is one process (threads stay allowed, see CLONE below).
  fork: { x86_64: 57, aarch64: null, why: 'process creation' },
  vfork: { x86_64: 58, aarch64: null, why: 'process creation' },
  execveat: { x86_64: 322, aarch64: 281, why: 'process creation' },
  // Other processes: nothing outside the run may be watched, read, written or signalled.
  ptrace: { x86_64: 101, aarch64: 117, why: 'other processes' },
  process_vm_readv: { x86_64: 310, aarch64: 270, why: 'other processes' },
  process_vm_writev: { x86_64: 311, aarch64: 271, why: 'other processes' },
  process_madvise: { x86_64: 440, aarch64: 440, why: 'other processes' },
  kcmp: { x86_64: 312, aarch64: 272, why: 'other processes' },
  pidfd_open: { x86_64: 434, aarch64: 434, why: 'other processes' },
  pidfd_send_signal: { x86_64: 424, aarch64: 424, why: 'other processes' },
  pidfd_getfd: { x86_64: 438, aarch64: 438, why: 'other processes' },
  tkill: { x86_64: 200, aarch64: 130, why: 'other processes' },
  // Network: the run has a network namespace with no interface; sockets are refused outright.
  socket: { x86_64: 41, aarch64: 198, why: 'sockets' },
  socketpair: { x86_64: 53, aarch64: 199, why: 'sockets' },
  // Namespaces and mounts: the sandbox's shape is fixed from outside.
  mount: { x86_64: 165, aarch64: 40, why: 'namespaces and mounts' },
  umount2: { x86_64: 166, aarch64: 39, why: 'namespaces and mounts' },
  pivot_root: { x86_64: 155, aarch64: 41, why: 'namespaces and mounts' },
  chroot: { x86_64: 161, aarch64: 51, why: 'namespaces and mounts' },
  unshare: { x86_64: 272, aarch64: 97, why: 'namespaces and mounts' },
  setns: { x86_64: 308, aarch64: 268, why: 'namespaces and mounts' },
  open_tree: { x86_64: 428, aarch64: 428, why: 'namespaces and mounts' },
  move_mount: { x86_64: 429, aarch64: 429, why: 'namespaces and mounts' },
  fsopen: { x86_64: 430, aarch64: 430, why: 'namespaces and mounts' },
  fsconfig: { x86_64: 431, aarch64: 431, why: 'namespaces and mounts' },
  fsmount: { x86_64: 432, aarch64: 432, why: 'namespaces and mounts' },
  fspick: { x86_64: 433, aarch64: 433, why: 'namespaces and mounts' },
  mount_setattr: { x86_64: 442, aarch64: 442, why: 'namespaces and mounts' },
  open_by_handle_at: { x86_64: 304, aarch64: 265, why: 'namespaces and mounts' },
  name_to_handle_at: { x86_64: 303, aarch64: 264, why: 'namespaces and mounts' },
  // Memory outside RLIMIT_AS and the scratch tmpfs: System V segments and queues live in the run's
  // IPC namespace until it dies, detached from any address space (shmget, shmat, memset, shmdt:
  // gigabytes of host memory per run); memfds are files of ~fileBytes each outside the scratch size.
  // Refusing the calls that create them leaves the rest (shmat, msgsnd, …) nothing to act on.
  shmget: { x86_64: 29, aarch64: 194, why: 'memory outside the limits' },
  msgget: { x86_64: 68, aarch64: 186, why: 'memory outside the limits' },
  semget: { x86_64: 64, aarch64: 190, why: 'memory outside the limits' },
  memfd_create: { x86_64: 319, aarch64: 279, why: 'memory outside the limits' },
  memfd_secret: { x86_64: 447, aarch64: 447, why: 'memory outside the limits' },
  // Kernel attack surface a rule never needs (keyrings, eBPF, io_uring, which bypasses seccomp
  // for the operations it queues, perf, userfaultfd, modules, kexec, reboot, swap, accounting).
  keyctl: { x86_64: 250, aarch64: 219, why: 'kernel interfaces' },
  add_key: { x86_64: 248, aarch64: 217, why: 'kernel interfaces' },
  request_key: { x86_64: 249, aarch64: 218, why: 'kernel interfaces' },
  bpf: { x86_64: 321, aarch64: 280, why: 'kernel interfaces' },
  io_uring_setup: { x86_64: 425, aarch64: 425, why: 'kernel interfaces' },
  io_uring_enter: { x86_64: 426, aarch64: 426, why: 'kernel interfaces' },
  io_uring_register: { x86_64: 427, aarch64: 427, why: 'kernel interfaces' },
  perf_event_open: { x86_64: 298, aarch64: 241, why: 'kernel interfaces' },
  userfaultfd: { x86_64: 323, aarch64: 282, why: 'kernel interfaces' },
  fanotify_init: { x86_64: 300, aarch64: 262, why: 'kernel interfaces' },
  lookup_dcookie: { x86_64: 212, aarch64: 18, why: 'kernel interfaces' },
  kexec_load: { x86_64: 246, aarch64: 104, why: 'kernel interfaces' },
  kexec_file_load: { x86_64: 320, aarch64: 294, why: 'kernel interfaces' },
  init_module: { x86_64: 175, aarch64: 105, why: 'kernel interfaces' },
  finit_module: { x86_64: 313, aarch64: 273, why: 'kernel interfaces' },
  delete_module: { x86_64: 176, aarch64: 106, why: 'kernel interfaces' },
  reboot: { x86_64: 169, aarch64: 142, why: 'kernel interfaces' },
  swapon: { x86_64: 167, aarch64: 224, why: 'kernel interfaces' },
  swapoff: { x86_64: 168, aarch64: 225, why: 'kernel interfaces' },
  acct: { x86_64: 163, aarch64: 89, why: 'kernel interfaces' },
  quotactl: { x86_64: 179, aarch64: 60, why: 'kernel interfaces' },
  syslog: { x86_64: 103, aarch64: 116, why: 'kernel interfaces' },
  vhangup: { x86_64: 153, aarch64: 58, why: 'kernel interfaces' },
  ioperm: { x86_64: 173, aarch64: null, why: 'kernel interfaces' },
  iopl: { x86_64: 172, aarch64: null, why: 'kernel interfaces' },
  uselib: { x86_64: 134, aarch64: null, why: 'kernel interfaces' },
}

/** Calls allowed only in a restricted form (checked on their arguments by the filter). */
export const RESTRICTED = {
  /** clone: threads only (CLONE_THREAD set); a new process is refused. */
  clone: { x86_64: 56, aarch64: 220 },
  /** clone3: its flags sit behind a pointer the filter cannot read, so ENOSYS (libc falls back to clone). */
  clone3: { x86_64: 435, aarch64: 435 },
  /** kill: only the run's own pid (2 in its pid namespace). */
  kill: { x86_64: 62, aarch64: 129 },
  /** tgkill: only the run's own thread group (raise(), abort()). */
  tgkill: { x86_64: 234, aarch64: 131 },
  /** execve: allowed for bubblewrap's own start of the interpreter; the runner forbids it afterwards. */
  execve: { x86_64: 59, aarch64: 221 },
} as const

/** AUDIT_ARCH_* values the filter checks first (anything else, e.g. i386 calls from x86_64, is killed). */
export const AUDIT_ARCH: Record<SandboxArch, number> = {
  x86_64: 0xc000003e,
  aarch64: 0xc00000b7,
}

/** The architecture of this process, or null where the sandbox has no syscall table. */
export function currentArch(): SandboxArch | null {
  if (process.arch === 'x64') return 'x86_64'
  if (process.arch === 'arm64') return 'aarch64'
  return null
}
