// The command line of one sandboxed rule run: bubblewrap (`bwrap`, Debian's package, the tool
// Flatpak confines applications with) builds a fresh mount, pid, network, IPC and UTS namespace in
// which only the interpreter, its libraries, the rulekeeper runtime (all read-only) and a small
// tmpfs scratch directory exist, with no capabilities, no_new_privs and the seccomp filter of
// seccomp.ts. Nothing of the data directory, the repository, tokens, /home or the server's /proc
// is mounted, so no trick inside the interpreter can name it.
//
// As an ordinary user, bwrap makes a user namespace (the run is the server's uid outside, mapped to
// one uid inside). As root, bwrap sets the mounts up with root's rights (so an interpreter under
// /root is still bound) and setpriv(1) then drops to a uid of its own per concurrent run, with an
// empty capability bounding set, before the interpreter starts: runs cannot signal each other or
// the server even if the pid namespaces were not there.
import { existsSync, lstatSync, readlinkSync, realpathSync } from 'node:fs'
import { dirname, posix } from 'node:path'

export interface SandboxLayout {
  /** The interpreter's real executable. */
  executable: string
  /** Directories (or files) of the interpreter that must be visible: prefix, sys.path entries. */
  interpreterPaths: string[]
  /** Folder holding rulekeeper_runner.py and the runtime, mounted read-only at RUNTIME_DIR. */
  runtimeDir: string
  /** The tmpfs scratch size (bytes). */
  scratchBytes: number
}

export interface RunIdentity {
  /** When the server is root: the uid/gid the run gets (one per concurrent run). */
  uid?: number
}

/** Where the runtime appears inside the sandbox. */
export const RUNTIME_DIR = '/rulekeeper'
/** The run's working directory (a tmpfs of its own). */
const SCRATCH_DIR = '/tmp'
const SETPRIV = '/usr/bin/setpriv'
/** The uid a run has inside its user namespace when the server is not root. */
const INSIDE_UID = 1000

/** The fd bubblewrap reads the seccomp program from (the spawner's 5th stdio slot). */
const SECCOMP_FD = 4

/** Paths that are never mounted, whatever the interpreter reports (defence against odd sys.path). */
const NEVER = [
  '/',
  '/etc',
  '/home',
  '/root',
  '/proc',
  '/sys',
  '/dev',
  '/run',
  '/var',
  '/tmp',
  '/usr',
  '/usr/local',
  '/boot',
  '/srv',
  '/mnt',
  '/opt',
]

function isUnder(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith('/') ? root : `${root}/`)
}

/** The host paths to mount read-only: system libraries, then the interpreter's own (deduplicated). */
function readOnlyMounts(layout: SandboxLayout): string[] {
  const system = ['/usr/lib', '/usr/lib64', '/usr/share/zoneinfo', '/etc/ld.so.cache'].filter((p) => existsSync(p))
  const wanted = layout.interpreterPaths
    .filter((p) => p && posix.isAbsolute(p) && existsSync(p))
    .map((p) => realpathSync(p))
    .filter((p) => !NEVER.includes(p))
  const all = [...system]
  // The executable at the path it was started by (a symlink such as /usr/bin/python3 is mounted as
  // the file it names), so the interpreter finds its prefix exactly as it does outside.
  for (const p of [...wanted.sort((a, b) => a.length - b.length), layout.executable]) {
    if (!all.some((m) => isUnder(p, m))) all.push(p)
  }
  return all
}

/** `--perms 0755 --dir` for every ancestor of every mount point, parents first (bwrap's own are 0700 as root). */
function ancestors(paths: string[]): string[] {
  const seen = new Set<string>()
  const args: string[] = []
  for (const path of paths) {
    const chain: string[] = []
    for (let d = dirname(path); d !== '/' && d !== '.'; d = dirname(d)) chain.unshift(d)
    for (const d of chain) {
      if (seen.has(d)) continue
      seen.add(d)
      args.push('--perms', '0755', '--dir', d)
    }
  }
  return args
}

/** /lib and /lib64: symlinks into /usr on merged-/usr systems, real folders elsewhere. */
function legacyLibDirs(): string[] {
  const args: string[] = []
  for (const dir of ['/lib', '/lib64']) {
    let st: ReturnType<typeof lstatSync>
    try {
      st = lstatSync(dir)
    } catch {
      continue
    }
    if (st.isSymbolicLink()) args.push('--symlink', readlinkSync(dir), dir)
    else if (st.isDirectory()) args.push('--ro-bind', dir, dir)
  }
  return args
}

/** The full argv (after `bwrap`) for one run. `command` is the interpreter's argv. */
export function bwrapArgs(layout: SandboxLayout, who: RunIdentity, command: string[]): string[] {
  const root = who.uid !== undefined
  const mounts = readOnlyMounts(layout)
  const extra = root ? [SETPRIV] : []
  const args = [
    // Namespaces. As root no user namespace: setpriv below changes the real uid instead.
    ...(root ? [] : ['--unshare-user', '--disable-userns', '--uid', String(INSIDE_UID), '--gid', String(INSIDE_UID)]),
    '--unshare-pid',
    '--unshare-net',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--hostname',
    'rule',
    '--die-with-parent',
    '--new-session',
    '--clearenv',
    ...(root ? ['--cap-add', 'CAP_SETUID', '--cap-add', 'CAP_SETGID'] : []),
    ...ancestors([...mounts, ...extra, RUNTIME_DIR]),
    ...mounts.flatMap((m) => ['--ro-bind', m, m]),
    ...extra.flatMap((m) => ['--ro-bind', m, m]),
    ...legacyLibDirs(),
    '--ro-bind',
    layout.runtimeDir,
    RUNTIME_DIR,
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    // As a user, bwrap's /dev is a tmpfs owned by the run with no size limit: /dev and /dev/shm were
    // writable outside the scratch size (host memory). Read-only; the device nodes stay usable.
    '--remount-ro',
    '/dev',
    '--perms',
    root ? '1777' : '0700',
    '--size',
    String(layout.scratchBytes),
    '--tmpfs',
    SCRATCH_DIR,
    // The root bwrap built the mount points in is a tmpfs of its own; nothing may be added to it.
    '--remount-ro',
    '/',
    '--chdir',
    SCRATCH_DIR,
    '--seccomp',
    String(SECCOMP_FD),
    '--',
  ]
  if (root) {
    const id = String(who.uid)
    args.push(
      SETPRIV,
      '--reuid',
      id,
      '--regid',
      id,
      '--clear-groups',
      '--inh-caps',
      '-all',
      '--bounding-set',
      '-all',
      '--',
    )
  }
  return [...args, ...command]
}

/** Whether setpriv(1) is where the root path expects it. */
export function hasSetpriv(): boolean {
  return existsSync(SETPRIV)
}
