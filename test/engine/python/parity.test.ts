// The runtime parity real Panther rules rely on (detections.md §4), one small rule per behaviour:
// deep_walk as panther_base_helpers' deep_walk, copy() and equality of the immutable containers,
// panther_core.immutable as a module, panther_detection_helpers.caching over a store that lives for
// one test, third-party modules from the configured interpreter, and a module it lacks reported as
// not run (passed: null), distinct from a failing rule.
import { execFileSync } from 'node:child_process'
import { readdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import { createPythonEngine } from '../../../src/engine/python/index.js'
import { contextWith, globalFile, inlineRule, type InlineTest } from './fixtures.js'

const { engine, pool, checkPythonModule } = createPythonEngine({ command: 'python3', poolSize: 2, timeoutMs: 5000 })
t.teardown(() => pool.close())

/** Runs one rule whose rule() returns True when every case holds; one test per named case. */
async function allHold(t: Test, source: string, cases: Record<string, Record<string, unknown>>) {
  const tests: InlineTest[] = Object.entries(cases).map(([name, log]) => ({
    name,
    expected: true,
    log: { ...log, case: name },
  }))
  const outcomes = await engine.runTests(inlineRule(source, tests), contextWith())
  for (const o of outcomes) t.equal(o.passed, true, `${o.name}${o.error ? `: ${o.error}` : ''}`)
}

t.test('deep_walk: panther_base_helpers semantics', (t) =>
  allHold(
    t,
    `
CASES = {
    "a single leaf as it is": lambda e: e.deep_walk("a", "b") == "x",
    "a leaf that is a list is returned as the list": lambda e: e.deep_walk("tags") == ["t1"] and not isinstance(e.deep_walk("tags"), str),
    "a leaf that is an object is returned as the object": lambda e: e.deep_walk("a") == {"b": "x"},
    "several leaves through a list: a list, unique, in order": lambda e: e.deep_walk("grants", "role") == ["admin", "member"],
    "one leaf through a list: the value alone": lambda e: e.deep_walk("one", "role") == "admin",
    "list results are flattened one level": lambda e: e.deep_walk("groups", "members") == ["m1", "m2", "m3"],
    "first and last": lambda e: e.deep_walk("grants", "role", return_val="first") == "admin" and e.deep_walk("grants", "role", return_val="last") == "member",
    "an unknown return_val answers 'all' (as Panther)": lambda e: e.deep_walk("grants", "role", return_val="nope") == "all",
    "a missing key: the default": lambda e: e.deep_walk("a", "zz", default="d") == "d" and e.deep_walk("a", "zz") is None,
    "a string on the way is not walked": lambda e: e.deep_walk("a", "b", "c", default="d") == "d",
    "a list of empty lists at the end: the default": lambda e: e.deep_walk("empty", default="d") == "d",
    "items missing the key add the default (as Panther)": lambda e: e.deep_walk("mixed", "role", default="?") == ["admin", "?"],
    "the module-level helper is the same walk": lambda e: deep_walk(e, "grants", "role") == ["admin", "member"],
}

from panther_core.immutable import deep_walk

def rule(event):
    return CASES[event.get("case")](event) is True
`,
    Object.fromEntries(
      [
        'a single leaf as it is',
        'a leaf that is a list is returned as the list',
        'a leaf that is an object is returned as the object',
        'several leaves through a list: a list, unique, in order',
        'one leaf through a list: the value alone',
        'list results are flattened one level',
        'first and last',
        "an unknown return_val answers 'all' (as Panther)",
        'a missing key: the default',
        'a string on the way is not walked',
        'a list of empty lists at the end: the default',
        'items missing the key add the default (as Panther)',
        'the module-level helper is the same walk',
      ].map((name) => [
        name,
        {
          a: { b: 'x' },
          tags: ['t1'],
          grants: [{ role: 'admin' }, { role: 'member' }, { role: 'admin' }, { other: 1 }],
          one: [{ role: 'admin' }],
          groups: [{ members: ['m1', 'm2'] }, { members: ['m2', 'm3'] }],
          empty: [[], [[]]],
          mixed: [{ role: 'admin' }, { other: 1 }],
        },
      ]),
    ),
  ),
)

t.test('immutable containers: copy(), equality with plain values, panther_core.immutable', (t) =>
  allHold(
    t,
    `
import panther_core.immutable
from panther_core.immutable import ImmutableCaseInsensitiveDict, ImmutableList
from panther_core import PantherEvent

def _copy_list(e):
    c = e["tags"].copy()
    c.append("z")
    return type(c) is list and c == ["a", "b", "z"] and e["tags"] == ["a", "b"]

def _copy_dict(e):
    c = e["user"].copy()
    c["email"] = "changed"
    c["roles"].append("x")
    return type(c) is dict and e["user"]["email"] == "u@example.com" and e["user"]["roles"] == ["r"]

CASES = {
    "ImmutableList.copy() is a mutable deep copy": _copy_list,
    "ImmutableCaseInsensitiveDict.copy() is a mutable deep copy": _copy_dict,
    "a list equals the plain list and tuple, both ways": lambda e: e["tags"] == ["a", "b"] and ["a", "b"] == e["tags"] and e["tags"] == ("a", "b") and e["tags"] != ["b"],
    "a dict equals the plain dict, both ways": lambda e: e["user"] == {"email": "u@example.com", "roles": ["r"]} and {"email": "u@example.com", "roles": ["r"]} == e["user"],
    "the event's containers are panther_core.immutable's": lambda e: isinstance(e["tags"], ImmutableList) and isinstance(e["user"], ImmutableCaseInsensitiveDict) and isinstance(e, panther_core.immutable.ImmutableCaseInsensitiveDict),
    "PantherEvent is also in panther_core.enriched_event": lambda e: __import__("panther_core.enriched_event", fromlist=["PantherEvent"]).PantherEvent is PantherEvent,
    "the containers can be built from plain values": lambda e: ImmutableList([1, 2]) == [1, 2] and ImmutableCaseInsensitiveDict({"A": 1})["a"] == 1,
}

def rule(event):
    return CASES[event.get("case")](event) is True
`,
    Object.fromEntries(
      [
        'ImmutableList.copy() is a mutable deep copy',
        'ImmutableCaseInsensitiveDict.copy() is a mutable deep copy',
        'a list equals the plain list and tuple, both ways',
        'a dict equals the plain dict, both ways',
        "the event's containers are panther_core.immutable's",
        'PantherEvent is also in panther_core.enriched_event',
        'the containers can be built from plain values',
      ].map((name) => [name, { tags: ['a', 'b'], user: { email: 'u@example.com', roles: ['r'] } }]),
    ),
  ),
)

const CACHING_CASES = [
  'counters: increment returns the new count, get reads it, reset clears it',
  'string sets: put, add (one or many), remove, get, reset',
  'dictionaries: put and get as JSON; not a dict is a TypeError',
  'set_key_expiration in the past: a ttl-checked read sees nothing',
  'evaluate_threshold counts to the threshold then resets',
  'the store lives for one test: this test starts empty',
]

t.test('panther_detection_helpers.caching: the real signatures over an in-memory store', (t) =>
  allHold(
    t,
    `
from panther_detection_helpers import caching
from panther_detection_helpers.caching import (add_to_string_set, evaluate_threshold, get_counter,
    get_dictionary, get_string_set, increment_counter, put_dictionary, put_string_set,
    remove_from_string_set, reset_counter, reset_string_set, set_key_expiration)

def _counters():
    ok = get_counter("k") == 0 and increment_counter("k") == 1 and increment_counter("k", 5) == 6
    ok = ok and get_counter("k") == 6
    reset_counter("k")
    return ok and get_counter("k") == 0

def _sets():
    put_string_set("s", ["a", "b"])
    ok = get_string_set("s") == {"a", "b"}
    ok = ok and add_to_string_set("s", "c") == {"a", "b", "c"} and add_to_string_set("s", ["d", "e"]) == {"a", "b", "c", "d", "e"}
    ok = ok and remove_from_string_set("s", ["a", "b", "c"]) == {"d", "e"}
    reset_string_set("s")
    return ok and get_string_set("s") == set() and add_to_string_set("new", "x") == {"x"}

def _dicts():
    put_dictionary("d", {"a": [1, 2]})
    try:
        put_dictionary("d", ["not", "a", "dict"])
        return False
    except TypeError:
        pass
    return get_dictionary("d") == {"a": [1, 2]} and get_dictionary("missing") == {}

def _expiry():
    increment_counter("e")
    set_key_expiration("e", 1000000001)
    return get_counter("e", force_ttl_check=True) == 0 and get_counter("e") == 1

def _threshold():
    hits = [evaluate_threshold("t", threshold=3) for _ in range(4)]
    return hits == [False, False, True, False]

def _fresh():
    first = get_counter("k") == 0 and get_string_set("s") == set() and get_dictionary("d") == {}
    increment_counter("k")
    return first

CASES = dict(zip(${JSON.stringify(CACHING_CASES)}, [_counters, _sets, _dicts, _expiry, _threshold, _fresh]))

def rule(event):
    return CASES[event.get("case")]() is True
`,
    Object.fromEntries(CACHING_CASES.map((name) => [name, {}])),
  ),
)

t.test('caching helpers mocked in a test (as Panther rules are tested)', async (t) => {
  const rule = inlineRule(
    'from panther_detection_helpers.caching import get_counter\n\ndef rule(event):\n    return get_counter("x") > 10\n',
    [
      { name: 'mocked high', expected: true, mocks: [{ objectName: 'get_counter', returnValue: 11 }] },
      { name: 'store empty', expected: false },
    ],
  )
  const outcomes = await engine.runTests(rule, contextWith())
  for (const o of outcomes) t.equal(o.passed, true, `${o.name}${o.error ? `: ${o.error}` : ''}`)
})

t.test('a module the interpreter lacks: not run, the module named, distinct from a failing rule', async (t) => {
  const atImport = inlineRule('import rk_not_installed_mod\n\ndef rule(event):\n    return True\n', [
    { name: 'at import', expected: true },
    { name: 'expected false too', expected: false },
  ])
  const [a, b] = await engine.runTests(atImport, contextWith())
  for (const o of [a!, b!]) {
    t.equal(o.passed, null, 'not run, never a pass or a fail')
    t.equal(o.actual, null)
    t.equal(o.error, 'not run: module rk_not_installed_mod is not installed')
  }
  const atCall = inlineRule('def rule(event):\n    import rk_lazy_missing.sub\n    return True\n', [
    { name: 'inside rule()', expected: true },
  ])
  const [c] = await engine.runTests(atCall, contextWith())
  t.equal(c!.passed, null)
  t.equal(c!.error, 'not run: module rk_lazy_missing is not installed')
  const viaGlobal = inlineRule('import helper_needs_lib\n\ndef rule(event):\n    return True\n', [
    { name: 'a global imports it', expected: true },
  ])
  const [d] = await engine.runTests(viaGlobal, contextWith(globalFile('helper_needs_lib', 'import rk_lib_absent\n')))
  t.equal(d!.passed, null)
  t.equal(d!.error, 'not run: module rk_lib_absent is not installed')
  // A rule bug stays a failure, and an ImportError of a name (not a module) is the rule's error.
  const buggy = inlineRule('from json import no_such_name\n\ndef rule(event):\n    return True\n', [
    { name: 'a bad name', expected: true },
  ])
  const [e] = await engine.runTests(buggy, contextWith())
  t.equal(e!.passed, false)
  t.match(e!.error, /ImportError/)
  // The module check still refuses it (it cannot tell a third-party module from a missing global),
  // naming it as not installed, with the line.
  t.match(await checkPythonModule(atImport, contextWith()), [
    { code: 'PythonImportError', line: 1, message: /module rk_not_installed_mod is not installed/ },
  ])
  t.match(await checkPythonModule(buggy, contextWith()), [{ code: 'PythonImportError' }])
})

t.test('third-party modules come from the configured interpreter (python.command)', async (t) => {
  // Not under /tmp: the sandbox's own /tmp (a tmpfs) would hide it.
  const dir = path.join(t.testdir(), 'venv')
  try {
    execFileSync('python3', ['-m', 'venv', '--without-pip', dir], { stdio: 'ignore' })
  } catch {
    t.comment('python3 -m venv is not available here')
    return
  }
  const lib = path.join(dir, 'lib')
  const site = path.join(lib, readdirSync(lib).find((d) => d.startsWith('python'))!, 'site-packages')
  writeFileSync(path.join(site, 'rk_team_requirement.py'), 'def answer():\n    return 42\n')
  const venv = createPythonEngine({ command: path.join(dir, 'bin', 'python3'), poolSize: 1, timeoutMs: 5000 })
  t.teardown(() => venv.pool.close())
  const rule = inlineRule(
    'import rk_team_requirement\n\ndef rule(event):\n    return rk_team_requirement.answer() == 42\n',
    [{ name: 'installed in the venv', expected: true }],
  )
  const [inVenv] = await venv.engine.runTests(rule, contextWith())
  t.equal(inVenv!.passed, true, inVenv!.error ?? '')
  // The default interpreter lacks it: not run, named.
  const [plain] = await engine.runTests(rule, contextWith())
  t.equal(plain!.passed, null)
  t.equal(plain!.error, 'not run: module rk_team_requirement is not installed')
})
