# What runs inside one confined child: load the globals (importable by GlobalID), the rule module and
# the data model of the test's log type from sources sent by the server, patch the test's Mocks,
# empty the caching helpers' store, call rule() and every other defined function on a PantherEvent
# (a policy: policy() and the others on its resource, a plain dict), and report each step as one JSON line on the result pipe, so a run killed midway still tells which
# function was running. Type checks follow detections.md §3; a module the interpreter lacks is
# reported as such (`missing_module`), not as the rule's error.
import io
import importlib.machinery
import json
import linecache
import sys
import types
from collections.abc import Mapping

from panther_core import DataModel, ImmutableList, PantherEvent

# Reported name -> module attribute, in the order they are called (rule first, §3.2).
FUNCTIONS = [
    ("detection", "rule"),
    ("title", "title"),
    ("dedup", "dedup"),
    ("alertContext", "alert_context"),
    ("severity", "severity"),
    ("description", "description"),
    ("reference", "reference"),
    ("runbook", "runbook"),
    ("destinations", "destinations"),
]
SEVERITIES = ("INFO", "LOW", "MEDIUM", "HIGH", "CRITICAL")
# The entry function of a policy's module, and what it is given (detections: rule(event)).
POLICY_ENTRY = ("policy", "policy(resource)")
# Panther's limits on what the alert functions return (panther_core / pypanther detection code): a
# generated text field is cut to 1,000 characters ending in the suffix, an alert context serialized
# past 200 KiB is replaced by an `_error` entry (not an error of the test).
MAX_TITLE = 1000
TRUNCATED_SUFFIX = "... (truncated)"
MAX_ALERT_CONTEXT_SIZE = 200 * 1024
# One reported function's line: in detection the server's record line limit follows it; a test's
# line must hold an alert context up to Panther's limit.
MAX_OUTPUT_BYTES = 64 * 1024
MAX_TEST_OUTPUT_BYTES = 256 * 1024
KEEP_OUTPUT = 16 * 1024


def _json_default(value):
    if isinstance(value, Mapping):
        return dict(value.items())
    if isinstance(value, (ImmutableList, tuple, set, frozenset)):
        return list(value)
    return repr(value)


def to_json(value):
    return json.dumps(value, default=_json_default, ensure_ascii=False, allow_nan=False)


_CODE = {}


def _compile(source, filename):
    # One child runs every test of one rule: compile once, execute into a fresh module per test.
    key = (filename, source)
    code = _CODE.get(key)
    if code is None:
        code = _CODE[key] = compile(source, filename, "exec")
    return code


def _register_source(filename, source):
    # Tracebacks and inspect read lines through linecache; the sources never touch the disk.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)


MAX_TRACEBACK_CHARS = 16 * 1024


def rule_traceback(exc, filenames):
    """The traceback as Python prints it, keeping only the frames of rule and global code (the
    runner's own frames say nothing to a rule author); for `rulekeeper debug`."""
    import traceback  # only on an error: ~2 ms of every run's start otherwise (with textwrap, contextlib)

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename in filenames]
    text = "".join(["Traceback (most recent call last):\n"] + traceback.format_list(frames)
                   + traceback.format_exception_only(type(exc), exc))
    return text if len(text) <= MAX_TRACEBACK_CHARS else "…" + text[-MAX_TRACEBACK_CHARS:]


def describe_error(exc, filenames):
    """'Type: message (file, line N)', the line being the deepest frame in rule or global code."""
    text = "%s: %s" % (type(exc).__name__, exc) if str(exc) else type(exc).__name__
    where = None
    if isinstance(exc, SyntaxError) and exc.filename in filenames:
        where = (exc.filename, exc.lineno)
        text = "%s: %s" % (type(exc).__name__, exc.msg)
    else:
        import traceback

        for frame in traceback.extract_tb(exc.__traceback__):
            if frame.filename in filenames:
                where = (frame.filename, frame.lineno)
    if where is None:
        return text, None, None
    return "%s (%s, line %s)" % (text, where[0], where[1]), where[0], where[1]


class GlobalsFinder:
    """Serves the global helpers the server sent, by GlobalID, ahead of the normal import path. A
    finder and loader by protocol, not by importlib.abc (whose import pulls importlib.resources in:
    ~18 ms of every run's start)."""

    def __init__(self, modules):
        self.modules = modules

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.modules:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, origin=self.modules[fullname]["filename"])

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        entry = self.modules[module.__name__]
        module.__file__ = entry["filename"]
        exec(_compile(entry["source"], entry["filename"]), module.__dict__)


def load_rule(job, emit):
    """Returns a fresh rule module (its globals freshly imported too), or None after emitting an
    import_error event: each test sees module state as the import left it."""
    rule = job["rule"]
    modules = job.get("globals") or {}
    filenames = {rule["filename"]} | {m["filename"] for m in modules.values()}
    for entry in modules.values():
        _register_source(entry["filename"], entry["source"])
    _register_source(rule["filename"], rule["source"])
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, GlobalsFinder)]
    for name in list(sys.modules):
        if name.split(".")[0] in modules:
            del sys.modules[name]
    sys.meta_path.insert(0, GlobalsFinder(modules))
    module = types.ModuleType(rule["module"])
    module.__file__ = rule["filename"]
    try:
        exec(_compile(rule["source"], rule["filename"]), module.__dict__)
    except BaseException as exc:  # noqa: BLE001 - SystemExit at import time is an import failure too
        if not missing_module(exc, filenames, emit):
            message, filename, line = describe_error(exc, filenames)
            emit({"t": "import_error", "message": message, "file": filename, "line": line})
        return None, filenames
    return module, filenames


def missing_module(exc, filenames, emit):
    """A module the interpreter does not have (the rule or a helper imports it): reported as the test
    not run, naming the module (and where it is imported), instead of as the rule's error. True
    when reported."""
    if isinstance(exc, ModuleNotFoundError) and isinstance(exc.name, str) and exc.name:
        _, filename, line = describe_error(exc, filenames)
        emit({"t": "missing_module", "module": exc.name, "file": filename, "line": line})
        return True
    return False


def test_log_type(job, test):
    """The log type whose data model the test's event gets (detections.md §4): the event's own
    `p_log_type`, else the test's `logType`, else the rule's first log type, else None."""
    log = test.get("log")
    own = log.get("p_log_type") if isinstance(log, dict) else None
    if isinstance(own, str) and own:
        return own
    log_type = test.get("logType")
    if isinstance(log_type, str) and log_type:
        return log_type
    log_types = job["rule"].get("logTypes") or []
    return log_types[0] if log_types and isinstance(log_types[0], str) else None


def load_data_model(job, log_type, filenames, emit):
    """(ok, DataModel or None): the data model the server sent for the log type, its module
    imported afresh (it may import globals); a failure is emitted as `data_model_error`."""
    entry = next((m for m in job.get("dataModels") or [] if log_type in (m.get("logTypes") or [])), None)
    if entry is None:
        return True, None
    module = None
    try:
        if isinstance(entry.get("source"), str):
            filenames.add(entry["filename"])
            _register_source(entry["filename"], entry["source"])
            module = types.ModuleType(entry["filename"].rsplit("/", 1)[-1][:-3] or "data_model")
            module.__file__ = entry["filename"]
            exec(_compile(entry["source"], entry["filename"]), module.__dict__)
        return True, DataModel(entry["id"], entry.get("mappings") or [], module)
    except BaseException as exc:  # noqa: BLE001 - the data model's error, reported as such
        if not missing_module(exc, filenames, emit):
            emit({"t": "data_model_error",
                  "message": "the data model %s failed to load: %s" % (entry["id"], describe_error(exc, filenames)[0])})
        return False, None


def reset_caching_store():
    # The in-memory store of panther_detection_helpers.caching lives for one test.
    caching = sys.modules.get("panther_detection_helpers.caching")
    reset = getattr(caching, "_reset", None)
    if callable(reset):
        reset()


def entry_of(job):
    """(attribute, signature) of the module's entry function: a policy's policy(resource), else rule(event)."""
    return POLICY_ENTRY if job["rule"].get("entry") == "policy" else ("rule", "rule(event)")


def functions_of(job):
    """FUNCTIONS with the job's entry function reported as `detection`."""
    return [("detection", entry_of(job)[0])] + FUNCTIONS[1:]




def _truncate(text):
    """Panther's cut of a generated field: past MAX_TITLE characters, the first ones and the suffix."""
    if len(text) <= MAX_TITLE:
        return text
    return text[: MAX_TITLE - len(TRUNCATED_SUFFIX)] + TRUNCATED_SUFFIX


def _alert_context_json(value):
    """The context as Panther serializes it (json.dumps with its encoder: the event's containers and
    nothing else, so a set or a datetime is a TypeError), and its size check."""
    from panther_core.immutable import json_encoder

    # allow_nan=False: a NaN is this function's error (JSON cannot carry it), raised inside the
    # caller's try, never an error of the whole run.
    text = json.dumps(value, default=json_encoder, allow_nan=False)
    if len(text) > MAX_ALERT_CONTEXT_SIZE:
        return {"_error": "alert_context size is [%d] characters, bigger than maximum of [%d] characters"
                % (len(text), MAX_ALERT_CONTEXT_SIZE)}
    return json.loads(text)


def _python_type_name(value):
    return {list: "a list", str: "a string", type(None): "null", bool: "a boolean"}.get(type(value), type(value).__name__)


def _type_error(name, value, expected):
    return "%s() returned %s, expected %s" % (dict(FUNCTIONS)[name], type(value).__name__, expected)


def _check_output(name, value, default_severity, entry="rule"):
    """(output, error) after the §3 type rules, which are Panther's: every text function must return
    a str (None too is an error), cut as Panther cuts it; outputs are made JSON-safe and bounded."""
    if name == "detection":
        if type(value) is not bool:
            return None, "%s() returned %s, expected a bool" % (entry, type(value).__name__)
        return value, None
    if name in ("title", "dedup", "description", "reference", "runbook"):
        if not isinstance(value, str):
            return None, _type_error(name, value, "a string")
        return _truncate(value), None
    if name == "alertContext":
        if not isinstance(value, Mapping):
            return None, _type_error(name, value, "a dict")
        return _alert_context_json(value), None
    if name == "severity":
        if not isinstance(value, str):
            return None, _type_error(name, value, "a string")
        upper = value.upper()
        if upper == "DEFAULT":
            return default_severity, None
        if upper not in SEVERITIES:
            return None, "severity() returned %r, expected one of %s or DEFAULT" % (value, ", ".join(SEVERITIES))
        return upper, None
    if name == "destinations":
        if value is None or value == "SKIP":
            return value, None  # None: not set; "SKIP": routed nowhere (alerts.md §4)
        # Panther wants a real list (not a tuple, not a list read from the event).
        if not isinstance(value, list) or not all(isinstance(d, str) for d in value):
            return None, _type_error(name, value, "a list of strings")
        return (list(value) if value else ["SKIP"]), None  # [] suppresses the alert's destinations
    return value, None


class OutputLimitExceeded(BaseException):
    """Raised into rule code by a print past the cap; a BaseException so `except Exception` in the
    rule does not swallow it (the test fails on the flag anyway)."""


class CappedWriter(io.TextIOBase):
    """sys.stdout / sys.stderr of one test: kept in memory, counted against one shared budget."""

    def __init__(self, budget):
        self.budget = budget
        self.parts = []
        self.kept = 0

    def writable(self):
        return True

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError("write() argument must be str, not %s" % type(text).__name__)
        self.budget["used"] += len(text)
        if self.budget["used"] > self.budget["limit"]:
            self.budget["exceeded"] = True
            raise OutputLimitExceeded("printed more than %d characters (the output limit)" % self.budget["limit"])
        if self.kept < KEEP_OUTPUT:
            self.parts.append(text[: KEEP_OUTPUT - self.kept])
            self.kept += len(self.parts[-1])
        return len(text)

    def text(self):
        return "".join(self.parts)


def make_mock(return_value):
    """What a test's Mocks entry puts in place of a name, as Panther's tool does:
    `unittest.mock.MagicMock(return_value=...)`, the value as the file gives it (a string is not
    parsed). unittest.mock is imported here, by tests that have Mocks only (its import, asyncio
    with it, costs every other run nothing; docs/decisions.md has the figure)."""
    from unittest.mock import MagicMock

    return MagicMock(return_value=return_value)


def run_tests(job, emit):
    """Every test of the job in order; markers let the worker time and attribute each one."""
    limit = int(job["limits"]["outputBytes"])
    for index, test in enumerate(job["tests"]):
        emit({"t": "test", "i": index})
        budget = {"used": 0, "limit": limit, "exceeded": False}
        out, err = CappedWriter(budget), CappedWriter(budget)
        sys.stdout, sys.stderr = out, err
        # The log type and data model the event got, once it got one (`rulekeeper debug` shows them).
        used = {}
        try:
            run_test(job, test, emit, used)
        finally:
            sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        end = {"t": "end", "i": index, "stdout": out.text(), "stderr": err.text(),
               "outputChars": budget["used"], "outputExceeded": budget["exceeded"]}
        end.update(used)
        emit(end)


def run_test(job, test, emit, used):
    module, filenames = load_rule(job, emit)
    if module is None:
        return
    if not isinstance(test.get("log"), dict):
        # panther_analysis_tool reads the Log's p_log_type first: anything but an object fails there.
        key = "Resource" if entry_of(job)[0] == "policy" else "Log"
        emit({"t": "log_error", "message": "%s must be an object (a JSON/YAML mapping), not %s"
              % (key, _python_type_name(test.get("log")))})
        return
    for mock in test.get("mocks") or []:
        name = mock.get("objectName")
        if not isinstance(name, str) or name not in module.__dict__:
            emit({"t": "mock_error", "message": "Mocks: %r is not a name in the rule module" % (name,)})
            return
        module.__dict__[name] = make_mock(mock.get("returnValue"))
    log_type = test_log_type(job, test)
    ok, data_model = load_data_model(job, log_type, filenames, emit)
    if not ok:
        return
    used["logType"] = log_type
    used["dataModel"] = data_model.data_model_id if data_model is not None else None
    reset_caching_store()
    entry, signature = entry_of(job)
    if entry == "policy":
        # Panther's tool hands a policy the test's Resource as it was read: a plain dict, not a
        # PantherEvent (no case-insensitive keys, no udm, mutable), and no data model.
        event = test.get("log") if isinstance(test.get("log"), dict) else {}
    else:
        event = PantherEvent(test.get("log") if isinstance(test.get("log"), dict) else {}, data_model)
    default_severity = str(job["rule"].get("severity") or "").upper() or None
    for name, attr in functions_of(job):
        fn = module.__dict__.get(attr)
        if name != "detection" and not callable(fn):
            continue
        emit({"t": "start", "fn": name})
        output, error, trace = None, None, None
        if not callable(fn):
            error = "the module defines no %s function" % signature
        else:
            try:
                output, error = _check_output(name, fn(event), default_severity, entry)
            except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt: still the rule's error
                if missing_module(exc, filenames, emit):
                    return
                error = describe_error(exc, filenames)[0]
                trace = rule_traceback(exc, filenames)
        event_fn = {"t": "fn", "fn": name, "output": output, "error": error}
        if trace is not None:
            event_fn["traceback"] = trace
        line = to_json(event_fn)
        if len(line) > MAX_TEST_OUTPUT_BYTES:
            line = to_json({"t": "fn", "fn": name, "output": None,
                            "error": "%s output too large (%d bytes, limit %d)" % (attr, len(line), MAX_TEST_OUTPUT_BYTES)})
        emit(line)


def check_module(job, emit):
    module, _ = load_rule(job, emit)
    if module is None:
        return
    defined = [name for name, attr in functions_of(job) if callable(module.__dict__.get(attr))]
    emit({"t": "module", "functions": defined})


class _Discard(io.TextIOBase):
    """sys.stdout / sys.stderr during detection: what rules print is dropped, as Panther's engine
    suppresses it (a leftover debugging print must not fill the run's output limit)."""

    def writable(self):
        return True

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError("write() argument must be str, not %s" % type(text).__name__)
        return len(text)


def run_detect(job, emit):
    """Live detection: one rule over many records. The module is imported once (its state lives for
    the run, as in Panther's engine); `tests` are indexes into `events`, one marker each. A record
    that does not match reports nothing past its marker; a match or an error reports one `r` line
    with each function's [output, error] (rule() first, the others only on a match). An import or
    data model failure is reported under the first marker and ends the run: the rule cannot run."""
    events = job["events"]
    tests = job["tests"]
    if not tests:
        return
    emit({"t": "test", "i": 0})
    module, filenames = load_rule(job, emit)
    if module is None:
        return
    models = {}
    for entry in job.get("dataModels") or []:
        for log_type in entry.get("logTypes") or []:
            ok, model = load_data_model({"dataModels": [entry]}, log_type, filenames, emit)
            if not ok:
                return
            models[log_type] = model
    default_severity = str(job["rule"].get("severity") or "").upper() or None
    functions = [(name, module.__dict__.get(attr)) for name, attr in FUNCTIONS]
    detect = functions[0][1]
    others = [(name, fn) for name, fn in functions[1:] if callable(fn)]
    if not callable(detect):
        emit({"t": "import_error", "message": "the module defines no rule(event) function", "file": None, "line": None})
        return
    sys.stdout = sys.stderr = _Discard()
    for index, position in enumerate(tests):
        if index:
            emit('{"t":"test","i":%d}' % index)  # the per-record marker, without json.dumps
        data = events[position]
        if not isinstance(data, dict):
            data = {}
        reset_caching_store()
        event = PantherEvent(data, models.get(data.get("p_log_type")))
        try:
            matched, error = _check_output("detection", detect(event), default_severity)
        except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt: still the rule's error
            matched, error = None, describe_error(exc, filenames)[0]
        if error is not None:
            emit({"t": "r", "f": {"detection": [None, error]}})
            continue
        if not matched:
            continue
        out = {"detection": [True, None]}
        for name, fn in others:
            try:
                out[name] = list(_check_output(name, fn(event), default_severity))
            except BaseException as exc:  # noqa: BLE001
                out[name] = [None, describe_error(exc, filenames)[0]]
        line = to_json({"t": "r", "f": out})
        if len(line) > MAX_OUTPUT_BYTES:
            line = to_json({"t": "r", "f": {"detection": [True, None], "_": [None,
                           "the alert functions' output is too large (%d bytes, limit %d)" % (len(line), MAX_OUTPUT_BYTES)]}})
        emit(line)
