# The warm worker: started once by the server's pool (empty environment, no shell), it imports the
# runtime, enters a private network namespace, then serves one job at a time from its stdin (one JSON
# object per line) by forking a confined child per run. The fork keeps the warm state pristine: rule
# code never runs in this process, so a crash, os._exit, a monkeypatched builtin or a memory blow-up
# dies with its child. This process enforces the wall-clock timeout and the output cap.
import errno
import gc
import json
import os
import select
import shutil
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import rulekeeper_runtime  # noqa: E402
import rulekeeper_sandbox as sandbox  # noqa: E402

# Imported while the worker may still read everything, so common rule imports are warm; each child
# inherits them for free. The list is a speed choice, not a whitelist.
PRELOAD = ("_strptime", "base64", "collections", "copy", "dataclasses", "datetime", "decimal", "enum",
           "fnmatch", "functools", "hashlib", "ipaddress", "itertools", "json", "math", "operator",
           "random", "re", "statistics", "string", "textwrap", "typing", "urllib.parse", "uuid",
           "zoneinfo", "encodings.idna", "encodings.latin_1", "encodings.ascii", "encodings.utf_16")
STREAM_KEEP = 16 * 1024
RESULT_LIMIT = 4 * 1024 * 1024


def preload():
    for name in PRELOAD:
        try:
            __import__(name)
        except Exception:  # noqa: BLE001 - a missing optional module only costs a later import
            pass


def describe_exit(status, limits):
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            return "exceeded the CPU time limit of %s s" % limits["cpuSeconds"]
        if sig == signal.SIGSEGV:
            return "crashed the Python interpreter (SIGSEGV, segmentation fault)"
        if sig == signal.SIGKILL:
            return "was killed (SIGKILL; out of memory?)"
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = "signal %d" % sig
        return "was terminated by %s" % name
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
    return "exited with code %d before finishing (os._exit or a fatal interpreter error)" % code


def _read_job(fd):
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return None  # the worker went away before handing over a job
        chunks.append(chunk)
        if chunk.endswith(b"\n"):
            return json.loads(b"".join(chunks))


def child_main(scratch, fds):
    """Runs in the forked child (a spare forked ahead of time); never returns."""
    code = 0
    try:
        os.setpgid(0, 0)
        sandbox.finish_confinement()  # die with the worker even before the job arrives
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(fds["out"], 1)
        os.dup2(fds["err"], 2)
        os.dup2(fds["res"], 3)
        os.dup2(fds["job"], 4)
        # Nothing of the worker's (its protocol pipes above all) stays reachable from rule code.
        os.closerange(5, 1 << 16)
        job = _read_job(4)
        os.close(4)
        if job is None:
            os._exit(0)
        os.chdir(scratch)
        limits = job["limits"]
        sandbox.apply_limits(limits)
        sandbox.drop_privileges()
        sandbox.finish_confinement()
        sys.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
        sandbox.GUARD.arm(scratch)

        def emit(event):
            line = event if isinstance(event, str) else rulekeeper_runtime.to_json(event)
            data = (line + "\n").encode("utf-8", "backslashreplace")
            while data:
                data = data[os.write(3, data):]

        if job["op"] == "check":
            emit({"t": "test", "i": 0})
            rulekeeper_runtime.check_module(job, emit)
            emit({"t": "end", "i": 0})
        else:
            rulekeeper_runtime.run_tests(job, emit)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001 - a full or closed stream is the rule's business
                pass
        emit({"t": "done"})
    except BaseException as exc:  # noqa: BLE001 - reported as an internal error of this run
        code = 70
        try:
            os.write(3, (json.dumps({"t": "internal", "message": "%s: %s" % (type(exc).__name__, exc)}) + "\n").encode())
        except BaseException:  # noqa: BLE001
            pass
    os._exit(code)


def _rmtree(path):
    def retry(func, target, _info):
        try:
            os.chmod(os.path.dirname(target), 0o700)
            os.chmod(target, 0o700)
            func(target)
        except OSError:
            pass

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=retry)  # onerror is deprecated from 3.12 on
    else:
        shutil.rmtree(path, onerror=retry)


def _drain(fd, record, key, limit_left):
    """Reads what is available without blocking; returns the byte count read."""
    total = 0
    try:
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                return total
            total += len(chunk)
            if record is not None and len(record[key]) < STREAM_KEEP:
                record[key] += chunk[: STREAM_KEEP - len(record[key])].decode("utf-8", "replace")
            if total > limit_left:
                return total
    except BlockingIOError:
        return total


class Spare:
    """A child forked ahead of the job it will run, so fork and its after-fork work (~1-2 ms) happen
    while the server is busy elsewhere. It runs the tests of one job in order, one rule per child."""

    def __init__(self, scratch_root):
        self.scratch = tempfile.mkdtemp(prefix="run-", dir=scratch_root)
        if os.geteuid() == 0:
            os.chown(self.scratch, sandbox.NOBODY, sandbox.NOBODY)
        job_r, self.job_w = os.pipe()
        self.res_r, res_w = os.pipe()
        self.out_r, out_w = os.pipe()
        self.err_r, err_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            child_main(self.scratch, {"job": job_r, "res": res_w, "out": out_w, "err": err_w})
        for fd in (job_r, res_w, out_w, err_w):
            os.close(fd)
        for fd in (self.res_r, self.out_r, self.err_r):
            os.set_blocking(fd, False)

    def run(self, job, records):
        """Runs job["tests"], appending one record per test reached. Returns normally when the child
        finished, or after killing it on a timeout, a cap or a crash (the last record says which)."""
        limits = job["limits"]
        try:
            data = (json.dumps(job) + "\n").encode("utf-8")
            os.set_blocking(self.job_w, True)
            while data:
                data = data[os.write(self.job_w, data):]
        except OSError:
            pass  # the spare died early; the crash path below reports how
        os.close(self.job_w)
        self.job_w = None
        timeout = limits["timeoutMs"] / 1000.0
        deadline = time.monotonic() + timeout
        pending = bytearray()
        current = None  # the record of the test running now
        output_left = limits["outputBytes"]
        open_fds = {self.res_r, self.out_r, self.err_r}
        failure = None
        finished = done = False
        while not finished and failure is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                failure = ("timeout", "timed out after %d ms (wall clock)" % limits["timeoutMs"])
                break
            ready, _, _ = select.select(list(open_fds), [], [], remaining)
            for fd in ready:
                if fd == self.res_r:
                    try:
                        chunk = os.read(fd, 65536)
                    except BlockingIOError:
                        continue
                    if not chunk:
                        open_fds.discard(fd)
                        finished = True  # EOF: done or dead, the events tell which
                        break
                    pending += chunk
                    if len(pending) > RESULT_LIMIT:
                        failure = ("crashed", "reported more than %d bytes of results" % RESULT_LIMIT)
                        break
                    *lines, rest = pending.split(b"\n")
                    pending = bytearray(rest)
                    for line in lines:
                        try:
                            event = json.loads(line)
                        except ValueError:
                            continue
                        kind = event.get("t")
                        if kind == "test":
                            current = {"i": event.get("i"), "status": "ok", "message": None, "events": [],
                                       "stdout": "", "stderr": "", "started": time.monotonic()}
                            records.append(current)
                            deadline = time.monotonic() + timeout
                        elif kind == "done":
                            finished = done = True
                        elif current is not None:
                            current["events"].append(event)
                            if kind == "end":
                                current["ms"] = round((time.monotonic() - current.pop("started")) * 1000, 3)
                        elif kind == "internal":
                            failure = ("internal", event.get("message"))
                else:
                    key = "stdout" if fd == self.out_r else "stderr"
                    read = _drain(fd, current, key, output_left)
                    if read == 0:
                        open_fds.discard(fd)
                    output_left -= read
                    if output_left < 0:
                        failure = ("output-limit", "printed more than %d bytes to stdout/stderr (the output limit)"
                                   % limits["outputBytes"])
                        break
            if not open_fds:
                finished = True
        # The whole process group: whatever the rule forked dies with it, done or not.
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:
            pass
        if failure is None and not done:
            # The child stopped reporting without saying done: it died. Its exit status says how.
            _, status = os.waitpid(self.pid, 0)
            self.pid = None
            failure = ("crashed", describe_exit(status, limits))
        if failure is not None:
            if current is None or any(e.get("t") == "end" for e in current["events"]):
                current = {"i": len(records), "events": [], "stdout": "", "stderr": ""}
                records.append(current)
            current.pop("started", None)
            current["status"], current["message"] = failure

    def dispose(self):
        for fd in (self.job_w, self.res_r, self.out_r, self.err_r):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        if self.pid is not None:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
        _rmtree(self.scratch)


def run_job(job, spare, scratch_root):
    """Runs every test of the job; after a test that killed its child, the rest continue in a fresh
    one. Returns (result, the spare used last, still to dispose)."""
    tests = job["tests"] if job["op"] == "test" else [None]
    records = []
    while len(records) < len(tests):
        first = len(records)
        part = dict(job, tests=tests[first:])
        batch = []
        spare.run(part, batch)
        for record in batch:
            record["i"] = first + (record.get("i") or 0)
        records.extend(batch)
        if not batch:
            break  # cannot happen with a sane child; never loop on it
        if len(records) < len(tests):
            spare.dispose()
            spare = Spare(scratch_root)
    return {"t": "result", "tests": records}, spare


def main():
    config = json.loads(sys.argv[1])
    scratch_root = config["scratchRoot"]
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.dup(1)
    # Stray output of this process goes to stderr, never into the protocol stream.
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    preload()
    network = sandbox.isolate_network()
    sandbox.install_guard()
    if os.geteuid() == 0:
        os.chmod(scratch_root, 0o711)  # the children (uid 65534) must reach their own run-* dirs

    def send(message):
        data = (json.dumps(message) + "\n").encode("utf-8")
        while data:
            data = data[os.write(proto_out, data):]

    send({
        "t": "hello",
        "pid": os.getpid(),
        "python": "%d.%d.%d" % sys.version_info[:3],
        "executable": sys.executable,
        "isolation": {
            "network": network,
            "user": sandbox.describe_privilege_drop(),
        },
    })
    gc.freeze()  # what the children inherit stays shared: the collector never writes to it
    spare = Spare(scratch_root)
    for raw in proto_in:
        job = json.loads(raw)
        if job.get("op") == "ping":
            send({"t": "pong", "id": job.get("id")})
            continue
        result, spare = run_job(job, spare, scratch_root)
        result["id"] = job.get("id")
        send(result)
        # Clean up and fork the next spare after answering, while the server reads the answer.
        spare.dispose()
        spare = Spare(scratch_root)
    # stdin closed: the server is gone (or closed the pool). The last worker out removes the root.
    spare.dispose()
    try:
        os.rmdir(scratch_root)
    except OSError:
        pass


if __name__ == "__main__":
    main()
