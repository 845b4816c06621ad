# A warm detection worker, inside the same sandbox as every run (rulekeeper_runner.py `serve`): it
# lives across batches. A batch is a header line (the rules it has not seen yet, loaded once: module,
# data models, globals; each set's number of block lines; the plan: which rule runs on which records)
# and then, per block of records, one JSON array per log-type set, read and parsed when the worker
# gets to that block (once, its event objects shared by every rule here). Every rule not done runs over a
# block before the next. Per run it reports a start frame, its matches and errors and an end frame
# (indexes count the rule's records in the whole batch), so the server always knows which rule runs;
# a SIGALRM tick stops a record past its clock or a rule past its batch budget (a soft stop: the
# server kills the whole worker when code does not yield). A rule not known to be slow also has a
# share of the batch (`shareMs`) and of each record (`shareRecordMs`): past either, the rule is
# evicted (its end frame says where it was) and the server runs the rest of its records in a worker
# of its own. A rule's budget, share and stops are its batch's, over all its blocks. A set given as
# stored lines (`stored`: the records as the server stored them, decoded here as Panther's engine
# decodes an event) is a JSON array with `,` and a tab between lines; a line that is not a JSON
# object is evaluated by no rule (when one makes the array unreadable, the block is decoded line by
# line).
import bisect
import json
import os
import signal
import sys
import time
import types

import rulekeeper_runtime as rt
from panther_core import DataModel, PantherEvent

TICK = 0.05
CACHING = "panther_detection_helpers.caching"
LINE_SEPARATOR = b",\t"  # between two stored lines of a block (warm-blocks.ts)


def _stored_object(text):
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def stored_block(line):
    """A block of stored lines: each a record (a dict), or None for one that is not a JSON object."""
    try:
        records = json.loads(line)
    except (ValueError, RecursionError):
        records = None
    if isinstance(records, list) and all(type(r) is dict for r in records):
        return records
    separator = LINE_SEPARATOR if isinstance(line, bytes) else LINE_SEPARATOR.decode()
    return [_stored_object(text) for text in line[1:-1].split(separator)]


class StopRecord(BaseException):
    """Raised into rule code on a record past its wall clock (not an Exception: rules catch those)."""


class StopRule(BaseException):
    """Raised into rule code when its budget for the batch is spent."""


class StopShare(BaseException):
    """Raised into rule code when it has held the worker past its share of the batch."""


STOPS = (StopRecord, StopRule, StopShare)


class Clock:
    """The running rule's clocks: the current record's start, its limit, the rule's budget. The
    budget is checked between records (a record runs to its own clock); the tick stops a record past
    its clock, and a rule past budget and clock together (an import that does not end)."""
    armed = False
    index = -1
    since = 0.0
    timeout = 5.0
    budget_end = 0.0
    share_end = float("inf")
    share_record = float("inf")
    share_fired = False


CLOCK = Clock()


def _tick(signum, frame):
    c = CLOCK
    if not c.armed:
        return
    now = time.monotonic()
    if now - c.since >= c.timeout:
        c.armed = False
        raise StopRecord()
    if now >= c.budget_end + c.timeout:
        c.armed = False
        raise StopRule()
    if now >= c.share_end or now - c.since >= c.share_record:
        c.armed = False
        c.share_fired = True
        raise StopShare()


class Progress:
    """What one plan item has done so far in its batch (the blocks run in turn): its next index, the
    time it held the worker (its budget and share are the batch's), its stopped records."""
    __slots__ = ("item", "next", "used", "stops", "done")

    def __init__(self, item):
        self.item = item
        self.next = 0
        self.used = 0.0
        self.stops = 0
        self.done = False


class Worker:
    def __init__(self, emit, limits):
        self.emit = emit
        self.limits = limits
        self.defs = {}  # rule key -> its definition (rule, dataModels)
        self.loaded = {}  # rule key -> (module, models, filenames) or an error list
        self.globals = {}
        self.models = {}  # (id, filename, source) -> DataModel
        self.records = {}  # per block: set key -> the block's records
        self.stored = set()  # set keys given as stored lines (a None record there: a damaged line)
        self.wrapped = {}  # per block: (set key, models id) -> [PantherEvent | None]
        sys.meta_path.insert(0, rt.GlobalsFinder(self.globals))

    def batch(self, msg, read_line):
        """A batch: its header (`msg`), then per block one line of records per set (`sets`: each
        set's key and its number of block lines, in the order they follow). Every rule not done runs
        over a block before the next block is read (the event objects stay in the CPU's cache)."""
        for name, entry in (msg.get("globals") or {}).items():
            if name not in self.globals:
                rt._register_source(entry["filename"], entry["source"])
                self.globals[name] = entry
        for d in msg.get("load") or []:
            self.defs[d["k"]] = d
        sets = msg.get("sets") or []
        size = msg.get("block")
        stored = self.stored = set(msg.get("stored") or [])
        rules = [Progress(item) for item in msg.get("plan") or []]
        base = 0
        for b in range(max((count for _, count in sets), default=0)):
            self.records = {}
            for key, count in sets:
                if b < count:
                    line = read_line()
                    if line is None:
                        os._exit(0)
                    self.records[key] = stored_block(line) if key in stored else json.loads(line)
            self.wrapped = {}
            length = 0
            for p in rules:
                if not p.done:
                    length = max(length, self.run_rule(p, base))
            base += size if size else length
        self.records = self.wrapped = {}
        self.emit('{"t":"b"}')

    def load(self, key):
        """(module, models, filenames), or None after emitting why the rule cannot run."""
        got = self.loaded.get(key)
        if got is not None:
            if isinstance(got, list):
                for event in got:
                    self.emit(event)
                return None
            return got
        d = self.defs[key]
        rule = d["rule"]
        filenames = {rule["filename"]} | {m["filename"] for m in self.globals.values()}
        errors = []
        module = types.ModuleType(rule["module"])
        module.__file__ = rule["filename"]
        rt._register_source(rule["filename"], rule["source"])
        try:
            exec(rt._compile(rule["source"], rule["filename"]), module.__dict__)
        except (StopRecord, StopRule):
            errors.append({"t": "import_error", "message": "timed out while importing the rule module",
                           "file": None, "line": None})
        except BaseException as exc:  # noqa: BLE001 - SystemExit at import time is an import failure too
            if not rt.missing_module(exc, filenames, errors.append):
                message, filename, line = rt.describe_error(exc, filenames)
                errors.append({"t": "import_error", "message": message, "file": filename, "line": line})
        models = {}
        if not errors:
            for entry in d.get("dataModels") or []:
                model = self.model(entry, filenames, errors)
                if model is None:
                    break
                for log_type in entry.get("logTypes") or []:
                    models[log_type] = model
        if not errors and not callable(module.__dict__.get("rule")):
            errors.append({"t": "import_error", "message": "the module defines no rule(event) function",
                           "file": None, "line": None})
        if errors:
            self.loaded[key] = errors
            for event in errors:
                self.emit(event)
            return None
        self.loaded[key] = got = (module, models, filenames)
        return got

    def model(self, entry, filenames, errors):
        ident = (entry["id"], entry.get("filename"), entry.get("source"), json.dumps(entry.get("mappings")))
        model = self.models.get(ident)
        if model is not None:
            return model
        ok, model = rt.load_data_model({"dataModels": [entry]}, (entry.get("logTypes") or [None])[0], filenames,
                                       errors.append)
        if not ok:
            return None
        self.models[ident] = model
        return model

    def wrap(self, set_key, models, length):
        """The block's event objects of a set for rules with these data models (shared by them)."""
        key = (set_key, tuple(sorted((lt, id(m)) for lt, m in models.items())))
        events = self.wrapped.get(key)
        if events is None:
            events = self.wrapped[key] = [None] * length
        return events

    def run_rule(self, p, base):
        """Runs plan item `p` over its records in the block that starts at record `base`: frames
        `s`, its results (indexes into the item's records), `e` with how far it got. Returns the
        block's length in records (0 when the rule has none there and sends nothing)."""
        item = p.item
        records = self.records.get(item["e"]) or []
        end_at = base + len(records)
        tests = item.get("tests")
        n = int(item["n"])
        first = p.next
        if tests is None:
            last = min(n, end_at)
        else:
            last = bisect.bisect_left(tests, end_at, first, n)
        if last <= first:
            if first >= n:
                p.done = True
            return len(records)
        emit = self.emit
        key = item["k"]
        emit('{"t":"s","k":%d}' % key)
        c = CLOCK
        c.timeout = timeout = float(item["timeoutMs"]) / 1000
        started = c.since = time.monotonic()
        # A rule's budget and share are its batch's: each block gets what its earlier blocks left.
        c.budget_end = started + float(item["budgetMs"]) / 1000 - p.used
        # The share counts from the first record: an import (bounded by the record clock) and the
        # data models load whole, never cut by a share (that would cache a broken rule).
        share = item.get("shareMs")
        c.share_end = float("inf")
        c.share_record = float("inf")
        c.share_fired = False
        c.index = -1
        c.armed = True
        try:
            got = self.load(key)
        except (StopRecord, StopRule):
            got = None
        c.armed = False
        if share:
            c.share_end = time.monotonic() + float(share) / 1000 - p.used
            c.share_record = float(item.get("shareRecordMs") or share) / 1000
        if got is None:
            p.done = True
            emit('{"t":"e","k":%d,"n":%d}' % (key, first))
            return len(records)
        module, models, filenames = got
        rule_fn = module.__dict__.get("rule")
        others = [(name, module.__dict__.get(attr)) for name, attr in rt.FUNCTIONS[1:]]
        others = [(name, fn) for name, fn in others if callable(fn)]
        default_severity = str(self.defs[key]["rule"].get("severity") or "").upper() or None
        events = self.wrap(item["e"], models, len(records))
        max_stops = int(item.get("maxStops") or 3)
        last_stop = ""
        reached = last
        why = None
        monotonic = time.monotonic
        modules = sys.modules
        budget_end = c.budget_end
        stop_at = min(budget_end, c.share_end)
        index = first
        while index < last:
            position = (index if tests is None else tests[index]) - base
            now = monotonic()
            if now >= stop_at:
                reached, why = index, ("budget" if now >= budget_end else "evicted")
                break
            event = events[position]
            if event is None:
                data = records[position]
                if data is None and item["e"] in self.stored:
                    index += 1  # a damaged stored line: no rule evaluates it
                    continue
                if not isinstance(data, dict):
                    data = {}
                event = events[position] = PantherEvent(data, models.get(data.get("p_log_type")))
            c.index = index
            c.since = now
            c.armed = True
            try:
                # The caching helpers' store lives for one record (as reset_caching_store does).
                if CACHING in modules:
                    reset = getattr(modules[CACHING], "_reset", None)
                    if callable(reset):
                        reset()
                try:
                    value = rule_fn(event)
                except STOPS:
                    raise
                except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt: the rule's error
                    line = rt.to_json({"t": "r", "i": index, "f": {"detection": [
                        None, rt.describe_error(exc, filenames)[0]]}})
                else:
                    # the common answer, without the type check's call; anything else is checked
                    line = None if value is False else self.finish(value, event, others, default_severity, filenames)
                c.armed = False
                if c.share_fired:
                    # rule code caught the share's stop (a bare except): this record runs again elsewhere
                    reached, why = index, "evicted"
                    break
            except StopRecord:
                c.armed = False
                p.stops += 1
                # the stopped record's clock is not the rule's budget
                budget_end = c.budget_end = c.budget_end + timeout
                stop_at = min(budget_end, c.share_end)
                last_stop = "timed out after %d ms (wall clock)" % int(item["timeoutMs"])
                emit(rt.to_json({"t": "x", "i": index, "m": last_stop}))
                index += 1
                if p.stops >= max_stops:
                    reached, why = index, "stops"
                    break
                continue
            except StopRule:
                c.armed = False
                reached, why = index, "budget"
                break
            except StopShare:
                c.armed = False
                reached, why = index, "evicted"
                break
            if line is not None:
                emit(line)
            index += 1
        c.armed = False
        c.share_end = c.share_record = float("inf")
        p.used += time.monotonic() - started
        p.next = reached
        if why is not None or reached >= n:
            p.done = True
        end = {"t": "e", "k": key, "n": reached}
        if why is not None:
            end["why"] = why
            end["stops"] = p.stops
            end["m"] = last_stop
        emit(rt.to_json(end))
        return len(records)

    def finish(self, value, event, others, default_severity, filenames):
        """The result line of a record whose rule() returned `value` (None: no match): the type
        check, then on a match the other functions, as run_detect reports them."""
        matched, error = rt._check_output("detection", value, default_severity)
        if error is not None:
            return rt.to_json({"t": "r", "i": CLOCK.index, "f": {"detection": [None, error]}})
        if not matched:
            return None
        out = {"detection": [True, None]}
        for name, fn in others:
            try:
                out[name] = list(rt._check_output(name, fn(event), default_severity))
            except STOPS:
                raise
            except BaseException as exc:  # noqa: BLE001
                out[name] = [None, rt.describe_error(exc, filenames)[0]]
        line = rt.to_json({"t": "r", "i": CLOCK.index, "f": out})
        if len(line) > rt.MAX_OUTPUT_BYTES:
            line = rt.to_json({"t": "r", "i": CLOCK.index, "f": {"detection": [True, None], "_": [
                None, "the alert functions' output is too large (%d bytes, limit %d)" % (len(line), rt.MAX_OUTPUT_BYTES)]}})
        return line


def serve(job, read_line, emit):
    """The loop: one batch line in, its frames out, until the server closes stdin."""
    sys.stdout = sys.stderr = rt._Discard()
    worker = Worker(emit, job["limits"])
    signal.signal(signal.SIGALRM, _tick)
    signal.setitimer(signal.ITIMER_REAL, TICK, TICK)
    while True:
        line = read_line()
        if line is None:
            os._exit(0)
        worker.batch(json.loads(line), read_line)
