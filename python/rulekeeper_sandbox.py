# Confinement of one run (a forked child of the warm worker) before rule code executes: resource
# limits, a privilege drop when the worker is root, and an audit hook that refuses process creation,
# sockets, signals, writes outside the scratch directory and other processes' /proc entries.
# Layers, not one wall: audit hooks are bypassable through ctypes, which is why the kernel-enforced
# layers (rlimits, uid, network namespace, process-group kill by the worker) come first.
import ctypes
import os
import resource
import signal
import sys

CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000
PR_SET_PDEATHSIG = 1
PR_SET_KEEPCAPS = 8
PR_SET_NO_NEW_PRIVS = 38
NOBODY = 65534
CAP_DAC_READ_SEARCH = 2

_libc = None


def libc():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def isolate_network():
    """Called once by the warm worker: a private network namespace with only a down loopback.

    Root owns CAP_SYS_ADMIN, so a network namespace alone is enough (and keeps uids mappable for the
    privilege drop); anyone else needs a user namespace too, which many kernels allow unprivileged.
    Returns a description of what applied, for the pool's log line.
    """
    flags = CLONE_NEWNET if os.geteuid() == 0 else CLONE_NEWUSER | CLONE_NEWNET
    try:
        if hasattr(os, "unshare"):
            os.unshare(flags)
        elif libc().unshare(flags) != 0:
            err = ctypes.get_errno()
            return "none (unshare: %s)" % os.strerror(err)
    except Exception as exc:  # noqa: BLE001 - any failure means "no isolation", reported as such
        return "none (%s)" % exc
    return "network namespace" if flags == CLONE_NEWNET else "user+network namespace"


def _set_limit(kind, value):
    try:
        soft, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(kind, (value, value))
    except (ValueError, OSError):
        pass


def apply_limits(limits):
    _set_limit(resource.RLIMIT_CORE, 0)
    _set_limit(resource.RLIMIT_AS, int(limits["memoryBytes"]))
    _set_limit(resource.RLIMIT_CPU, int(limits["cpuSeconds"]))
    _set_limit(resource.RLIMIT_FSIZE, int(limits["fileBytes"]))
    _set_limit(resource.RLIMIT_NOFILE, 64)
    # Counts every process of the real uid; ignored by the kernel for uid 0, hence the privilege drop.
    _set_limit(resource.RLIMIT_NPROC, int(limits["maxProcesses"]))
    # A full file raises EFBIG in the rule instead of killing the run with SIGXFSZ.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_privileges():
    """Root only: become uid/gid 65534 with no capabilities, or CAP_DAC_READ_SEARCH alone when the
    interpreter's standard library lives where only root can read (e.g. /root/.pyenv: rule code
    imports lazily). Another uid cannot read the server's /proc/<pid>/environ, signal it or write
    root's files, and RLIMIT_NPROC binds. Returns a description of what applied.
    """
    if os.geteuid() != 0:
        return "not needed (not root)"
    keep_read = _stdlib_root_only()
    lib = libc()
    lib.prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0)
    os.setgroups([])
    os.setresgid(NOBODY, NOBODY, NOBODY)
    os.setresuid(NOBODY, NOBODY, NOBODY)
    header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3: two 32-bit data words
    data = (_CapData * 2)()
    bit = (1 << CAP_DAC_READ_SEARCH) if keep_read else 0
    data[0].effective = bit
    data[0].permitted = bit
    if lib.capset(ctypes.byref(header), ctypes.byref(data)) != 0:
        # Still uid 65534, only without read access to root's files.
        return "uid 65534 (capset failed: %s)" % os.strerror(ctypes.get_errno())
    return "uid 65534 + CAP_DAC_READ_SEARCH (the standard library is root-only)" if keep_read else "uid 65534"


_ROOT_ONLY = []


def _stdlib_root_only():
    if not _ROOT_ONLY:
        _ROOT_ONLY.append(not _world_readable(os.path.dirname(os.__file__)))
    return _ROOT_ONLY[0]


def describe_privilege_drop():
    """What drop_privileges() will do in each child, for the worker's hello (no side effect)."""
    if os.geteuid() != 0:
        return "the server's uid (not root: no drop)"
    if _stdlib_root_only():
        return "uid 65534 + CAP_DAC_READ_SEARCH (the standard library is root-only)"
    return "uid 65534"


def _world_readable(directory):
    """Whether uid 65534 could import from `directory`: o+x on every ancestor, o+rx on it."""
    path = os.path.realpath(directory)
    try:
        if os.stat(path).st_mode & 0o005 != 0o005:
            return False
        while path != "/":
            path = os.path.dirname(path)
            if not os.stat(path).st_mode & 0o001:
                return False
    except OSError:
        return False
    return True


def finish_confinement():
    try:
        lib = libc()
        # After the uid change (which clears it): die with the worker, never outlive it.
        lib.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        lib.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    except AttributeError:
        pass  # not Linux: no prctl; the worker's process-group kill still applies


class AuditGuard:
    """Refuses what rule code has no business doing. Installed once in the warm worker (hooks cannot
    be removed), inert there, armed in each forked child with that run's scratch directory."""

    BLOCKED = {
        "os.fork": "start processes",
        "os.forkpty": "start processes",
        "os.posix_spawn": "start processes",
        "os.spawn": "start processes",
        "os.exec": "start processes",
        "os.system": "start processes",
        "subprocess.Popen": "start processes",
        "os.kill": "send signals",
        "os.killpg": "send signals",
        "signal.pthread_kill": "send signals",
        "socket.__new__": "open sockets (no network)",
        "socket.connect": "open sockets (no network)",
        "socket.getaddrinfo": "open sockets (no network)",
        # Soft limits may be raised up to the hard ones; rule code has no reason to touch either.
        "resource.setrlimit": "change resource limits",
        "resource.prlimit": "change resource limits",
    }
    WRITES = {"os.remove", "os.rename", "os.mkdir", "os.rmdir", "os.chmod", "os.chown", "os.link",
              "os.symlink", "os.truncate", "os.utime", "shutil.rmtree", "os.chroot"}
    WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

    def __init__(self):
        self.scratch = None
        self.pid = None
        self.read_roots = ()

    def arm(self, scratch):
        self.scratch = os.path.realpath(scratch)
        self.pid = str(os.getpid())
        # Reading is allowed where Python and its packages live, the runtime, time zone data and the
        # scratch directory; not the server's data, configuration or anybody's home.
        roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                 os.path.dirname(os.path.abspath(__file__)), "/usr/share/zoneinfo", "/proc/self", "/dev"}
        roots.update(p for p in sys.path if p)
        self.read_roots = tuple(sorted({os.path.realpath(r) for r in roots} | {self.scratch, "/etc/localtime"}))

    def _readable(self, path):
        if not isinstance(path, (str, bytes)):
            return True
        real = os.path.realpath(os.fsdecode(path))
        return any(real == r or real.startswith(r + os.sep) for r in self.read_roots) or \
            os.path.realpath("/etc/localtime") == real

    def _inside(self, path):
        if isinstance(path, int) or path is None:
            return True
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str):
            return True
        real = os.path.realpath(path)
        return real == self.scratch or real.startswith(self.scratch + os.sep) or real == "/dev/null"

    def _deny(self, what, detail=""):
        raise PermissionError("rulekeeper: rule code may not %s%s" % (what, detail))

    def __call__(self, event, args):
        if self.scratch is None:
            return
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            if isinstance(path, (str, bytes)):
                text = os.fsdecode(path)
                if text.startswith("/proc/"):
                    part = text[6:].split("/", 1)[0]
                    if part.isdigit() and part != self.pid:
                        self._deny("read other processes' /proc entries", ": " + text)
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & self.WRITE_FLAGS)
            if writing and not self._inside(path):
                self._deny("write outside its scratch directory", ": " + os.fsdecode(path))
            if not writing and not self._readable(path):
                self._deny("read files outside its scratch directory and the Python installation", ": " + os.fsdecode(path))
        elif event in self.BLOCKED:
            self._deny(self.BLOCKED[event], " (%s)" % event)
        elif event in self.WRITES:
            # The changed path: both ends of a rename, the new name of a link, else the first arg.
            if event == "os.rename":
                paths = args[:2]
            elif event in ("os.link", "os.symlink"):
                paths = args[1:2]
            else:
                paths = args[:1]
            if not all(self._inside(p) for p in paths):
                self._deny("change files outside its scratch directory", " (%s)" % event)

GUARD = AuditGuard()


def install_guard():
    sys.addaudithook(GUARD)
