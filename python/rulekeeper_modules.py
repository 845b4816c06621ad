# The `modules` job: the index-time check of a revision's Python files (rules, global helpers, data
# models) in one run. Each module is compiled, then imported as the test runner loads it (its globals
# served by GlobalID from memory, afresh for every module), and what failed is reported under the
# module's marker: `module_error` (syntax, an exception at import time, no required function, with
# the file, line and column Python gives) or `missing_module` (a module the interpreter lacks). A
# module that imports cleanly reports nothing past its marker.
import sys
import types

import rulekeeper_runtime as runtime


class _Discard:
    """sys.stdout / sys.stderr while modules import: what their top level prints is dropped."""

    def write(self, text):
        return len(text) if isinstance(text, str) else 0

    def flush(self):
        pass


def _error(exc, filenames):
    message, filename, line = runtime.describe_error(exc, filenames)
    column = None
    if isinstance(exc, SyntaxError) and exc.filename in filenames:
        # describe_error's message already ends with "(file, line N)"; the column is Python's offset.
        column = exc.offset if isinstance(exc.offset, int) and exc.offset > 0 else None
    return {"t": "module_error", "message": message, "file": filename, "line": line, "column": column}


def check_one(entry, finder_modules, emit):
    filename = entry["filename"]
    source = entry["source"]
    filenames = {filename} | {m["filename"] for m in finder_modules.values()}
    for name in list(sys.modules):
        if name.split(".")[0] in finder_modules:
            del sys.modules[name]
    runtime._register_source(filename, source)
    module = types.ModuleType(entry.get("module") or "module")
    module.__file__ = filename
    try:
        code = runtime._compile(source, filename)
        exec(code, module.__dict__)
    except BaseException as exc:  # noqa: BLE001 - SystemExit at import time is an import failure too
        if not runtime.missing_module(exc, filenames, emit):
            emit(_error(exc, filenames))
        return
    required = entry.get("requires")
    if isinstance(required, str) and required and not callable(module.__dict__.get(required)):
        # The message the tests' verdict gives (rule(event) / policy(resource)), so every surface agrees.
        argument = "resource" if required == "policy" else "event"
        emit({"t": "module_error", "message": "defines no %s(%s) function" % (required, argument),
              "code": "PythonMissingRule", "file": filename, "line": None, "column": None})


def check_modules(job, emit):
    modules = job["modules"]
    finder_modules = job.get("globals") or {}
    for entry in finder_modules.values():
        runtime._register_source(entry["filename"], entry["source"])
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, runtime.GlobalsFinder)]
    sys.meta_path.insert(0, runtime.GlobalsFinder(finder_modules))
    sys.stdout = sys.stderr = _Discard()
    for index, position in enumerate(job["tests"]):
        emit({"t": "test", "i": index})
        check_one(modules[position], finder_modules, emit)
