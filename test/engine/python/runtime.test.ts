// The runtime a scheduled rule sees (detections.md §3.1) and the verdict (§3.2), table-driven over
// one warm pool: the case-insensitive read-only event and its helpers, panther_core, globals that
// import globals, mocks, fresh module state per test, the type rules of every function, and the
// import problems that make a rule invalid.
import t from 'tap'
import { createPythonEngine } from '../../../src/engine/python/index.js'
import { contextWith, globalFile, inlineRule } from './fixtures.js'

const { engine, pool, checkPythonModule } = createPythonEngine({ command: 'python3', poolSize: 2, timeoutMs: 3000 })
t.teardown(() => pool.close())

const EVENT_RULE = `
import json
from panther_core import PantherEvent

def _raises(fn, kind):
    try:
        fn()
    except kind:
        return True
    return False

def _set(e):
    e["x"] = 1

def _set_nested(e):
    e["user"]["email"] = "y"

CASES = {
    "case-insensitive keys": lambda e: e.get("actor") == "dana" and e["Actor"] == "dana" and "aCtOr" in e,
    "nested objects too": lambda e: e["user"]["email"] == "x@example.com" and e.get("USER").get("EMAIL") == "x@example.com",
    "an exact key wins": lambda e: e["Name"] == "exact" and e["NAME"] == "upper",
    "get has a default": lambda e: e.get("missing", 7) == 7 and e.get("missing") is None,
    "the event is read-only": lambda e: _raises(lambda: _set(e), TypeError),
    "nested objects are read-only": lambda e: _raises(lambda: _set_nested(e), TypeError),
    "nested lists are read-only": lambda e: _raises(lambda: e["tags"].append("z"), AttributeError) and e["tags"][0] == "a",
    "deep_get walks objects case-insensitively": lambda e: e.deep_get("user", "profile", "role") == "admin",
    "deep_get default on a missing step": lambda e: e.deep_get("user", "nope", "role", default="d") == "d",
    "deep_get default on null": lambda e: e.deep_get("nothing", default="d") == "d",
    "deep_walk maps over lists, unique values": lambda e: e.deep_walk("grants", "role") == ["admin", "member"],
    "deep_walk first and last": lambda e: e.deep_walk("grants", "role", return_val="first") == "admin" and e.deep_walk("grants", "role", return_val="last") == "member",
    "deep_walk one value alone": lambda e: e.deep_walk("user", "email") == "x@example.com",
    "deep_walk default": lambda e: e.deep_walk("grants", "nope", default=[]) == [],
    "to_dict is a mutable plain copy": lambda e: type(e.to_dict()) is dict and json.loads(json.dumps(e.to_dict()))["USER"]["EMAIL"] == "x@example.com" and "user" not in e.to_dict(),
    "the event is a PantherEvent": lambda e: isinstance(e, PantherEvent),
}

def rule(event):
    return CASES[event.get("case")](event) is True
`

const LOG = {
  ACTOR: 'dana',
  USER: { EMAIL: 'x@example.com', Profile: { Role: 'admin' } },
  Name: 'exact',
  NAME: 'upper',
  tags: ['a', 'b'],
  nothing: null,
  grants: [{ role: 'admin' }, { role: 'member' }, { role: 'admin' }, { other: 1 }],
}

t.test('the event: case-insensitive, read-only, get / deep_get / deep_walk / to_dict', async (t) => {
  const cases = [...EVENT_RULE.matchAll(/^ {4}"([^"]+)": lambda/gm)].map((m) => m[1]!)
  t.ok(cases.length >= 15)
  const outcomes = await engine.runTests(
    inlineRule(
      EVENT_RULE,
      cases.map((c) => ({ name: c, expected: true, log: { ...LOG, case: c } })),
    ),
    contextWith(),
  )
  for (const o of outcomes) t.equal(o.passed, true, `${o.name}${o.error ? `: ${o.error}` : ''}`)
})

t.test('globals import globals; each is importable by its GlobalID', async (t) => {
  const a = globalFile('helpers_a', 'from helpers_b import double\n\ndef quadruple(x):\n    return double(double(x))\n')
  const b = globalFile('helpers_b', 'def double(x):\n    return 2 * x\n')
  const rule = inlineRule(
    'import helpers_a\n\ndef rule(event):\n    return helpers_a.quadruple(event.get("n")) == 8\n',
    [
      { name: 'two', expected: true, log: { n: 2 } },
      { name: 'three', expected: false, log: { n: 3 } },
    ],
  )
  const outcomes = await engine.runTests(rule, contextWith(a, b))
  t.same(
    outcomes.map((o) => o.passed),
    [true, true],
  )
})

t.test('module state is fresh for every test; a mock lasts one test only', async (t) => {
  const source =
    'CALLS = []\n\ndef helper():\n    return "real"\n\ndef rule(event):\n    CALLS.append(1)\n    return len(CALLS) == 1 and helper() == event.get("want")\n'
  const outcomes = await engine.runTests(
    inlineRule(source, [
      {
        name: 'mocked',
        expected: true,
        log: { want: 'mocked' },
        mocks: [{ objectName: 'helper', returnValue: 'mocked' }],
      },
      { name: 'real again', expected: true, log: { want: 'real' } },
      { name: 'still fresh', expected: true, log: { want: 'real' } },
    ]),
    contextWith(),
  )
  t.same(
    outcomes.map((o) => [o.passed, o.error]),
    [
      [true, null],
      [true, null],
      [true, null],
    ],
  )
})

t.test('a mock behaves as MagicMock(return_value=…): calls, call records, asserts, attributes', async (t) => {
  const source = [
    'def lookup(name):',
    '    return "real"',
    '',
    'def rule(event):',
    '    first = lookup("a")',
    '    second = lookup("b", strict=True)',
    '    if event.get("check") == "calls":',
    '        lookup.assert_called_with("b", strict=True)',
    '        return first == second == "mocked" and lookup.call_count == 2 and lookup.called',
    '    if event.get("check") == "attribute":',
    '        return lookup.anything.else_() is not None and lookup("c") == "mocked" and lookup.call_count == 3',
    '    return first == "mocked"',
    '',
  ].join('\n')
  const mocks = [{ objectName: 'lookup', returnValue: 'mocked' }]
  const outcomes = await engine.runTests(
    inlineRule(source, [
      { name: 'plain call', expected: true, mocks },
      { name: 'call records replayed into the real MagicMock', expected: true, log: { check: 'calls' }, mocks },
      { name: 'attributes after calls', expected: true, log: { check: 'attribute' }, mocks },
    ]),
    contextWith(),
  )
  t.same(
    outcomes.map((o) => [o.passed, o.error]),
    [
      [true, null],
      [true, null],
      [true, null],
    ],
  )
})

t.test('the standard library imports lazily inside the confined child', async (t) => {
  const source =
    'def rule(event):\n    import email.utils, zoneinfo, sqlite3, csv, io\n    tz = zoneinfo.ZoneInfo("Europe/Paris")\n    return email.utils.parseaddr("Dana <d@example.com>")[1] == "d@example.com" and tz.key == "Europe/Paris"\n'
  const [o] = await engine.runTests(inlineRule(source, [{ name: 'lazy imports', expected: true }]), contextWith())
  t.equal(o!.passed, true, o!.error ?? '')
})

t.test('a mock of a name the module does not have fails the test', async (t) => {
  const [o] = await engine.runTests(
    inlineRule('def rule(event):\n    return True\n', [
      { name: 'bad mock', expected: true, mocks: [{ objectName: 'nowhere', returnValue: 1 }] },
    ]),
    contextWith(),
  )
  t.equal(o!.passed, false)
  t.match(o!.error, /Mocks: 'nowhere' is not a name in the rule module/)
})

const TYPED = `
def rule(event):
    return event.get("rule", True)

def title(event):
    return event.get("title", "a title")

def alert_context(event):
    return event.get("context", {"k": "v"})

def severity(event):
    return event.get("severity", "default")

def destinations(event):
    return event.get("destinations", ["slack"])

def runbook(event):
    if event.get("boom"):
        raise ValueError("runbook exploded")
    return "look at it"
`

t.test('outputs and the type rule of every function', async (t) => {
  const rows: Array<{
    name: string
    expected: boolean
    log: Record<string, unknown>
    passed: boolean
    error?: RegExp
    fn?: [string, unknown, RegExp | null]
  }> = [
    { name: 'all well', expected: true, log: {}, passed: true, fn: ['severity', 'LOW', null] },
    {
      name: 'severity in any case',
      expected: true,
      log: { severity: 'hIgH' },
      passed: true,
      fn: ['severity', 'HIGH', null],
    },
    {
      name: 'unknown severity',
      expected: true,
      log: { severity: 'urgent' },
      passed: false,
      error: /severity: severity\(\) returned 'urgent'/,
    },
    {
      name: 'alert_context must be a dict',
      expected: true,
      log: { context: [1] },
      passed: false,
      error: /alert_context\(\) returned ImmutableList, expected a dict/,
    },
    {
      name: 'destinations must be strings',
      expected: true,
      log: { destinations: ['a', 1] },
      passed: false,
      error: /destinations\(\) returned/,
    },
    {
      name: 'title must be a string',
      expected: true,
      log: { title: 5 },
      passed: false,
      error: /title: title\(\) returned int/,
    },
    {
      name: 'rule must return a bool (true)',
      expected: true,
      log: { rule: 1 },
      passed: false,
      error: /rule\(\) returned int, expected a bool/,
    },
    {
      name: 'rule must return a bool (false)',
      expected: false,
      log: { rule: 0 },
      passed: false,
      error: /expected a bool/,
    },
    {
      name: 'a raising function fails an expected-true test',
      expected: true,
      log: { boom: true },
      passed: false,
      error: /runbook: ValueError: runbook exploded \(scheduled_rules\/inline.py, line \d+\)/,
    },
    {
      name: 'but not an expected-false one',
      expected: false,
      log: { rule: false, boom: true },
      passed: true,
      fn: ['runbook', null, /runbook exploded/],
    },
  ]
  const outcomes = await engine.runTests(inlineRule(TYPED, rows), contextWith())
  rows.forEach((row, i) => {
    const o = outcomes[i]!
    t.equal(o.passed, row.passed, `${row.name}: passed`)
    if (row.error) t.match(o.error, row.error, `${row.name}: error`)
    if (row.fn) {
      const f = o.functions![row.fn[0]]!
      t.same(f.output, row.fn[1], `${row.name}: ${row.fn[0]} output`)
      if (row.fn[2]) t.match(f.error, row.fn[2])
      else t.equal(f.error, null)
    }
  })
  t.equal(outcomes[9]!.errored, true, 'errors are reported even when they do not matter')
  t.equal(outcomes[9]!.error, null)
})

t.test('import problems make the rule invalid, with the Python error and line', async (t) => {
  const cases: Array<[string, string, RegExp, string, number | undefined]> = [
    ['syntax error', 'def rule(event):\n    return (\n', /SyntaxError/, 'PythonImportError', 2],
    [
      'name error at import',
      'x = 1\ny = undefined_name\n\ndef rule(event):\n    return True\n',
      /NameError: name 'undefined_name' is not defined \(scheduled_rules\/inline.py, line 2\)/,
      'PythonImportError',
      2,
    ],
    [
      'missing rule',
      'def title(event):\n    return "t"\n',
      /defines no rule\(event\) function/,
      'PythonMissingRule',
      undefined,
    ],
    ['rule is not callable', 'rule = True\n', /defines no rule\(event\) function/, 'PythonMissingRule', undefined],
    ['sys.exit at import', 'import sys\nsys.exit(4)\n', /SystemExit: 4/, 'PythonImportError', 2],
  ]
  for (const [name, source, message, code, line] of cases) {
    const problems = await checkPythonModule(inlineRule(source, []), contextWith())
    t.equal(problems.length, 1, name)
    t.match(problems[0], { path: ['Filename'], code, message }, name)
    t.equal(problems[0]!.line, line, `${name}: line`)
  }
  const broken = globalFile('broken', 'def f(:\n')
  const problems = await checkPythonModule(
    inlineRule('import broken\ndef rule(e):\n    return True\n', []),
    contextWith(broken),
  )
  t.match(problems[0], { message: /SyntaxError.*global_helpers\/broken.py, line 1/ })
  t.equal(problems[0]!.line, undefined, 'a line in a global is named in the message, not as the rule line')
})

t.test('an endless loop at import time is an import problem, not a hang', async (t) => {
  const problems = await checkPythonModule(inlineRule('while True:\n    pass\n', []), contextWith())
  t.match(problems, [{ code: 'PythonImportError', message: /timed out after 3000 ms/ }])
})

t.test('static checks need no process', async (t) => {
  const rule = inlineRule('', [{ name: 'x', expected: true }], {
    Filename: 'inline.txt',
    ScheduledQueries: ['Nope.Query'],
  })
  const result = engine.check(rule, contextWith())
  t.match(result.errors, [{ path: ['Filename'], message: /\.py/ }])
  t.match(result.warnings, [{ path: ['ScheduledQueries', 0], code: 'UnknownScheduledQuery' }])
  const noSource = { ...inlineRule('', [{ name: 'x', expected: true }]), pythonSource: undefined }
  t.match(engine.check(noSource, contextWith()).errors, [{ code: 'MissingPythonModule' }])
  const [o] = await engine.runTests(noSource, contextWith())
  t.match(o, { passed: false, error: /was not found beside the rule/ })
})

t.test('runModuleTests runs file-form tests against a module outside any rule file (§1.7)', async (t) => {
  const { runModuleTests, pool: own } = createPythonEngine({ command: 'python3', poolSize: 1, timeoutMs: 3000 })
  t.teardown(() => own.close())
  const generated =
    'def rule(event):\n    return event.get("status") == "failed"\n\ndef title(event):\n    return "login failed"\n'
  const outcomes = await runModuleTests(
    { source: generated, filename: 'simple_rules/editor_failed_login.py', severity: 'Low' },
    [
      { Name: 'failed', ExpectedResult: true, Log: { STATUS: 'failed' } },
      { Name: 'ok', ExpectedResult: false, Log: { status: 'ok' } },
    ],
    contextWith(),
  )
  t.same(
    outcomes.map((o) => [o.passed, o.actual, o.functions?.title?.output]),
    [
      [true, true, 'login failed'],
      [true, false, 'login failed'],
    ],
  )
})
