# One rule run, inside its bubblewrap sandbox (src/sandbox/bubblewrap.ts): the server starts this
# ahead of time as a spare, so the interpreter and the runtime are loaded before a job exists. It
# says hello on fd 3, reads exactly one job (one JSON line) from stdin (a warm detection worker,
# `serve`, then reads its batches from stdin until it is closed: rulekeeper_serve.py), lowers its own resource
# limits (soft = hard, which no process without capabilities can raise again), forbids execve to
# itself with a second seccomp filter, runs the tests, reports on fd 3, and exits. The confinement
# is the sandbox's, not this file's: rule code may rewrite anything here and reach nothing more
# than its own run; the server stops reading fd 3 at `done` and kills the process.
import os

# Descriptors the server inherited from whoever started it (a lock held with `flock 9`, a shell's
# `exec 5<`, a CI runner's pipes) are not close-on-exec and pass through Node and bubblewrap into
# this process: a directory descriptor of the data directory would be a way out of every mount
# namespace. Only 0-2 (stdio) and 3 (the result pipe) are kept; nothing of the rule has run yet.
os.closerange(4, 1 << 20)

import ctypes  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import signal  # noqa: E402
import struct  # noqa: E402
import sys  # noqa: E402

# -I leaves the script's folder out; -S leaves site-packages out (no .pth file runs): the server
# passes the interpreter's sys.path as it is with `site`, which is put back as it was.
sys.path[:] = [os.path.dirname(os.path.abspath(__file__))] + [
    p for p in (json.loads(sys.argv[1]) if len(sys.argv) > 1 else sys.path) if isinstance(p, str)]

import rulekeeper_runtime  # noqa: E402

# Imported before the job, so the rule imports that nearly every rule makes are warm. Kept short:
# every run pays for this list whether its rule uses it or not (a rule's own imports cost it once).
PRELOAD = ("datetime", "ipaddress", "fnmatch", "collections", "functools", "itertools")
PROTOCOL_FD = 3
# Tasks (the interpreter and its threads) one run may have: without it, raw clone(CLONE_THREAD) with
# 4 KiB stacks makes thousands of tasks, each a host pid and kernel memory outside RLIMIT_AS.
MAX_TASKS = 64
EXECVE = {"x86_64": (59, 322), "aarch64": (221, 281)}
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2


def preload():
    for name in PRELOAD:
        try:
            __import__(name)
        except Exception:  # noqa: BLE001 - a missing optional module only costs a later import
            pass


def emit(event):
    line = event if isinstance(event, str) else rulekeeper_runtime.to_json(event)
    data = (line + "\n").encode("utf-8", "backslashreplace")
    while data:
        data = data[os.write(PROTOCOL_FD, data):]


_PENDING = []


def read_line():
    """The next line of stdin (without its newline), or None once the server closed it."""
    chunks = _PENDING[:]
    del _PENDING[:]
    while True:
        last = chunks[-1] if chunks else b""
        nl = last.find(b"\n")
        if nl >= 0:
            rest = last[nl + 1:]
            if rest:
                _PENDING.append(rest)
            return b"".join(chunks[:-1] + [last[:nl]])
        chunk = os.read(0, 1 << 20)
        if not chunk:
            return None  # the server went away
        chunks.append(chunk)


def read_job():
    line = read_line()
    return None if line is None else json.loads(line)


def lower_limits(limits):
    def cap(kind, value, slack=0):
        _, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(kind, (value, value + slack if hard == resource.RLIM_INFINITY else min(value + slack, hard)))

    cap(resource.RLIMIT_CORE, 0)
    cap(resource.RLIMIT_AS, int(limits["memoryBytes"]))
    # The CPU limit backs the server's wall clock up: SIGXCPU one second after it (SIGKILL at the
    # hard limit, one more second on), so a busy loop is reported as the timeout it is.
    cap(resource.RLIMIT_CPU, int(limits["cpuSeconds"]) + 1, 1)
    cap(resource.RLIMIT_FSIZE, int(limits["fileBytes"]))
    cap(resource.RLIMIT_NOFILE, 64)
    # RLIMIT_NPROC counts the tasks of a uid in one user namespace: as root each run has a uid of its
    # own, as a user each run a user namespace of its own, so this is the run's own task count.
    cap(resource.RLIMIT_NPROC, int(limits.get("maxProcesses") or 0) or MAX_TASKS)
    # A full scratch file raises EFBIG in the rule instead of killing the run with SIGXFSZ.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def forbid_exec():
    """A second filter on top of the sandbox's (filters only ever add up): execve and execveat
    answer EPERM from now on. The sandbox's filter must allow execve, which is how it starts us."""
    numbers = EXECVE.get(os.uname().machine)  # platform.machine(), without importing platform
    if numbers is None:
        return
    insns = [(0x20, 0, 0, 0)]  # load the syscall number
    for nr in numbers:
        insns += [(0x15, 0, 1, nr), (0x06, 0, 0, 0x00050001)]  # equal: return ERRNO(EPERM)
    insns.append((0x06, 0, 0, 0x7FFF0000))  # allow
    raw = b"".join(struct.pack("<HBBI", *i) for i in insns)
    buf = ctypes.create_string_buffer(raw, len(raw))

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = Prog(len(insns), ctypes.cast(buf, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")


def main():
    devnull = os.open(os.devnull, os.O_RDONLY)
    preload()
    emit({"t": "hello", "pid": os.getpid(), "uid": os.getuid(),
          "python": "%d.%d.%d" % sys.version_info[:3], "executable": sys.executable})
    job = read_job()
    if job is None or job["op"] != "serve":
        os.dup2(devnull, 0)  # a warm detection worker reads its batches from stdin
    if job is None:
        os._exit(0)
    lower_limits(job["limits"])
    forbid_exec()
    sys.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
    if job["op"] == "ping":
        pass  # the round trip alone (benchmark baseline)
    elif job["op"] == "check":
        emit({"t": "test", "i": 0})
        rulekeeper_runtime.check_module(job, emit)
        emit({"t": "end", "i": 0})
    elif job["op"] == "detect":
        rulekeeper_runtime.run_detect(job, emit)
    elif job["op"] == "serve":
        import rulekeeper_serve  # warm detection workers only

        rulekeeper_serve.serve(job, read_line, emit)
    elif job["op"] == "modules":
        import rulekeeper_modules  # only this job type pays for it

        rulekeeper_modules.check_modules(job, emit)
    else:
        rulekeeper_runtime.run_tests(job, emit)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 - a full or closed stream is the rule's business
            pass
    emit({"t": "done"})
    os._exit(0)


if __name__ == "__main__":
    try:
        main()
    except BaseException as exc:  # noqa: BLE001 - reported as an internal error of this run
        try:
            emit({"t": "internal", "message": "%s: %s" % (type(exc).__name__, exc)})
        except BaseException:  # noqa: BLE001
            pass
        os._exit(70)
