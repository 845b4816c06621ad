// Where the Python test runner used to differ from panther_analysis_tool (PAT) and panther_core, one
// small rule per difference (docs/python-rules.md, "Differences from PAT"): the data model chosen by
// the event's p_log_type, mocks that are real MagicMocks, plain Python from event.deep_walk, the
// containers' repr and slices, udm_path / lookup / event_time_epoch / json_encoder, and the type
// rules, cuts and limits Panther applies to what title(), dedup(), alert_context() and
// destinations() return.
import t, { type Test } from 'tap'
import { createPythonEngine } from '../../../src/engine/python/index.js'
import type { PythonTestOutcome } from '../../../src/engine/python/verdict.js'
import type { EngineContext } from '../../../src/engine/engine.js'
import { contextWith, dataModelFile, inlineRule, type InlineTest } from './fixtures.js'

const { engine, pool } = createPythonEngine({ command: 'python3', poolSize: 2, timeoutMs: 5000 })
t.teardown(() => pool.close())

async function run(
  source: string,
  tests: InlineTest[],
  ctx: EngineContext = contextWith(),
  extra: Record<string, unknown> = {},
): Promise<PythonTestOutcome[]> {
  return (await engine.runTests(inlineRule(source, tests, extra), ctx)) as PythonTestOutcome[]
}

/** One rule whose rule() returns True when every case holds; one expected-true test per case. */
async function allHold(t: Test, source: string, cases: string[], log: Record<string, unknown>) {
  const tests = cases.map((name) => ({ name, expected: true, log: { ...log, case: name } }))
  for (const o of await run(source, tests)) t.equal(o.passed, true, `${o.name}${o.error ? `: ${o.error}` : ''}`)
}

t.test(
  "the data model is the one of the event's p_log_type, then the test's LogType, then the rule's first",
  async (t) => {
    const ctx = contextWith(
      dataModelFile('Model.A', ['Log.A'], [{ Name: 'actor', Path: 'a_user' }]),
      dataModelFile('Model.B', ['Log.B'], [{ Name: 'actor', Path: '$.b.user' }]),
    )
    const source = 'def rule(event):\n    return event.udm("actor") == "alice"\n'
    const outcomes = await run(
      source,
      [
        { name: 'p_log_type B', expected: true, log: { p_log_type: 'Log.B', b: { user: 'alice' }, a_user: 'bob' } },
        {
          name: 'p_log_type wins over LogType',
          expected: true,
          logType: 'Log.A',
          log: { p_log_type: 'Log.B', b: { user: 'alice' }, a_user: 'bob' },
        },
        { name: 'LogType without p_log_type', expected: true, logType: 'Log.B', log: { b: { user: 'alice' } } },
        { name: "the rule's first log type", expected: true, log: { a_user: 'alice' } },
      ],
      ctx,
      { LogTypes: ['Log.A', 'Log.B'] },
    )
    for (const o of outcomes) t.equal(o.passed, true, `${o.name}${o.error ? `: ${o.error}` : ''}`)
    t.same(
      outcomes.map((o) => o.dataModel),
      [
        { logType: 'Log.B', id: 'Model.B' },
        { logType: 'Log.B', id: 'Model.B' },
        { logType: 'Log.B', id: 'Model.B' },
        { logType: 'Log.A', id: 'Model.A' },
      ],
      'each test reports the log type and data model it used',
    )
  },
)

t.test('a mock is a real unittest.mock.MagicMock(return_value=returnValue), the value unparsed', async (t) => {
  const source = `
from unittest.mock import MagicMock

def lookup(name):
    return {"real": True}

def rule(event):
    case = event.get("case")
    if case == "isinstance":
        return isinstance(lookup, MagicMock)
    if case == "iterate":
        return list(lookup) == []
    if case == "in":
        return ("x" in lookup) is False
    if case == "call":
        return lookup("a") == "true" and lookup.call_count == 1
    return False
`
  const mocks = [{ objectName: 'lookup', returnValue: 'true' }]
  const outcomes = await run(
    source,
    ['isinstance', 'iterate', 'in', 'call'].map((c) => ({ name: c, expected: true, log: { case: c }, mocks })),
  )
  for (const o of outcomes) t.equal(o.passed, true, `${o.name}${o.error ? `: ${o.error}` : ''}`)
})

t.test('event.deep_walk returns plain Python (list, dict), as panther_core', (t) =>
  allHold(
    t,
    `
CASES = {
    "several leaves: a plain list": lambda e: type(e.deep_walk("grants", "role")) is list,
    "a list leaf: a plain list": lambda e: type(e.deep_walk("tags")) is list and e.deep_walk("tags") == ["t1", "t2"],
    "an object leaf: a plain dict": lambda e: type(e.deep_walk("a")) is dict and e.deep_walk("a") == {"b": "x"},
    "the plain result is a copy": lambda e: (e.deep_walk("tags").append("t3") or True) and e.deep_walk("tags") == ["t1", "t2"],
}

def rule(event):
    return CASES[event.get("case")](event) is True
`,
    [
      'several leaves: a plain list',
      'a list leaf: a plain list',
      'an object leaf: a plain dict',
      'the plain result is a copy',
    ],
    { a: { b: 'x' }, tags: ['t1', 't2'], grants: [{ role: 'admin' }, { role: 'member' }] },
  ),
)

t.test("the event's containers print and slice as panther_core's", (t) =>
  allHold(
    t,
    `
CASES = {
    "a list prints as ImmutableList((...))": lambda e: repr(e["tags"]) == "ImmutableList(('t1', 't2'))",
    "an object prints as ImmutableCaseInsensitiveDict({...})": lambda e: str(e["a"]) == "ImmutableCaseInsensitiveDict({'b': 'x'})",
    "the event prints as PantherEvent({...})": lambda e: repr(e).startswith("PantherEvent({"),
    "a slice of a list is a plain tuple": lambda e: e["tags"][0:1] == ("t1",) and type(e["tags"][1:]) is tuple,
}

def rule(event):
    return CASES[event.get("case")](event) is True
`,
    [
      'a list prints as ImmutableList((...))',
      'an object prints as ImmutableCaseInsensitiveDict({...})',
      'the event prints as PantherEvent({...})',
      'a slice of a list is a plain tuple',
    ],
    { a: { b: 'x' }, tags: ['t1', 't2'] },
  ),
)

t.test('udm_path, lookup, event_time_epoch and json_encoder as panther_core', async (t) => {
  const ctx = contextWith(
    dataModelFile(
      'Model.P',
      ['Log.P'],
      [
        { Name: 'source_ip', Path: '$.src.ip' },
        { Name: 'absent', Path: '$.nowhere' },
        { Name: 'actor', Method: 'get_actor' },
      ],
      'def get_actor(event):\n    return "a"\n',
    ),
  )
  const source = `
import json
from panther_core import PantherEvent

def rule(event):
    case = event.get("case")
    if case == "the matched path, not the Path as written":
        return event.udm_path("source_ip") == "src.ip"
    if case == "a Path matching nothing: None":
        return event.udm_path("absent") is None
    if case == "a Method: its name":
        return event.udm_path("actor") == "get_actor"
    if case == "without a data model: PantherError":
        try:
            PantherEvent({"p_log_type": "X"}).udm_path("source_ip")
        except Exception as err:
            return type(err).__name__ == "PantherError"
        return False
    if case == "lookup reads _mocked_lookup_data_":
        return event.lookup("table", "k") == "v" and event.lookup("table", "missing") is None
    if case == "event_time_epoch":
        return event.event_time_epoch() == 1704164645 and PantherEvent({}).event_time_epoch() == 0
    if case == "json_encoder serializes the event's containers":
        return json.loads(json.dumps({"e": event["src"]}, default=PantherEvent.json_encoder)) == {"e": {"ip": "1.2.3.4"}}
    return False
`
  const cases = [
    'the matched path, not the Path as written',
    'a Path matching nothing: None',
    'a Method: its name',
    'without a data model: PantherError',
    'lookup reads _mocked_lookup_data_',
    'event_time_epoch',
    "json_encoder serializes the event's containers",
  ]
  const log = {
    p_log_type: 'Log.P',
    src: { ip: '1.2.3.4' },
    p_event_time: '2024-01-02 03:04:05.123456789',
    _mocked_lookup_data_: { table: { k: 'v' } },
  }
  const outcomes = await run(
    source,
    cases.map((name) => ({ name, expected: true, log: { ...log, case: name } })),
    ctx,
    { LogTypes: ['Log.P'] },
  )
  for (const o of outcomes) t.equal(o.passed, true, `${o.name}${o.error ? `: ${o.error}` : ''}`)
})

t.test('text functions must return a str (None too is an error) and are cut as Panther cuts them', async (t) => {
  const source = `
def rule(event):
    return True

def title(event):
    return None if event.get("case") == "none" else "t" * 1200

def description(event):
    return "d" * 1001

def reference(event):
    return "r" * 1000
`
  const [none, long] = await run(source, [
    { name: 'none', expected: true, log: { case: 'none' } },
    { name: 'long', expected: true, log: { case: 'long' } },
  ])
  t.equal(none?.passed, false, 'title() returning None fails an expected-true test')
  t.match(none?.functions?.title?.error, /title\(\) returned NoneType, expected a string/)
  t.equal(long?.passed, true, long?.error ?? '')
  const title = long?.functions?.title?.output as string
  t.equal(title.length, 1000)
  t.ok(title.endsWith('t... (truncated)'), 'cut to 985 characters and the suffix')
  t.equal(String(long?.functions?.description?.output).slice(-15), '... (truncated)')
  t.equal(String(long?.functions?.reference?.output).length, 1000, 'exactly 1,000 is not cut')

  const [dedupNone] = await run('def rule(event):\n    return True\n\ndef dedup(event):\n    return None\n', [
    { name: 'dedup None', expected: true, log: {} },
  ])
  t.equal(dedupNone?.passed, false, 'dedup() returning None is an error too')
})

t.test("alert_context: Panther's JSON encoder and its 200 KiB limit", async (t) => {
  const source = `
import datetime

def rule(event):
    return True

def alert_context(event):
    case = event.get("case")
    if case == "a set":
        return {"s": {1, 2}}
    if case == "a datetime":
        return {"when": datetime.datetime(2024, 1, 1)}
    if case == "the event's containers":
        return {"tags": event["tags"], "a": event["a"]}
    if case == "100 KiB":
        return {"big": "x" * (100 * 1024)}
    return {"huge": "x" * (210 * 1024)}
`
  const outcomes = await run(
    source,
    ['a set', 'a datetime', "the event's containers", '100 KiB', 'over 200 KiB'].map((c) => ({
      name: c,
      expected: true,
      log: { case: c, tags: ['t'], a: { b: 1 } },
    })),
  )
  const [set, date, containers, big, huge] = outcomes
  t.equal(set?.passed, false, 'a set is not JSON serializable: an error')
  t.match(set?.functions?.alertContext?.error, /TypeError: .*not JSON serializable/)
  t.equal(date?.passed, false, 'a datetime is not JSON serializable: an error')
  t.equal(containers?.passed, true, containers?.error ?? '')
  t.same(containers?.functions?.alertContext?.output, { tags: ['t'], a: { b: 1 } })
  t.equal(big?.passed, true, `a 100 KiB context is within Panther's limit: ${big?.error}`)
  t.equal((big?.functions?.alertContext?.output as { big?: string } | undefined)?.big?.length, 100 * 1024)
  t.equal(huge?.passed, true, 'past 200 KiB the context is replaced, not an error')
  t.match(huge?.functions?.alertContext?.output, {
    _error: /^alert_context size is \[\d+\] characters, bigger than maximum of \[204800\] characters$/,
  })
})

t.test('destinations(): a real list; [] suppresses ("SKIP")', async (t) => {
  const source = `
def rule(event):
    return True

def destinations(event):
    case = event.get("case")
    if case == "empty":
        return []
    if case == "tuple":
        return ("slack",)
    if case == "from the event":
        return event["dests"]
    return ["slack"]
`
  const [empty, tuple, fromEvent, list] = await run(
    source,
    ['empty', 'tuple', 'from the event', 'list'].map((c) => ({
      name: c,
      expected: true,
      log: { case: c, dests: ['slack'] },
    })),
  )
  t.same(empty?.functions?.destinations?.output, ['SKIP'])
  t.equal(empty?.passed, true)
  t.equal(tuple?.passed, false, 'a tuple is not a list')
  t.match(tuple?.functions?.destinations?.error, /destinations\(\) returned tuple, expected a list of strings/)
  t.equal(fromEvent?.passed, false, 'a list read from the event is not a list either')
  t.same(list?.functions?.destinations?.output, ['slack'])
})

t.test('a Log that is not an object fails the test, as in PAT', async (t) => {
  const rule = inlineRule('def rule(event):\n    return False\n', [{ name: 'list', expected: false }])
  const tests = rule.data.Tests as Array<Record<string, unknown>>
  tests[0]!.Log = ['not', 'an', 'object']
  tests.push({ Name: 'string', ExpectedResult: false, Log: 'text' })
  const outcomes = (await engine.runTests(rule, contextWith())) as PythonTestOutcome[]
  t.same(
    outcomes.map((o) => [o.passed, o.error]),
    [
      [false, 'Log must be an object (a JSON/YAML mapping), not a list'],
      [false, 'Log must be an object (a JSON/YAML mapping), not a string'],
    ],
  )
})

t.test('a NaN in alert_context is that function’s error, in a test and in detection, never the run’s', async (t) => {
  const source = `
def rule(event):
    return True

def alert_context(event):
    return {"bytes": float(event.get("bytes"))}
`
  const [nan, five] = await run(source, [
    { name: 'NaN', expected: true, log: { bytes: 'NaN' } },
    { name: 'five', expected: true, log: { bytes: '5' } },
  ])
  t.equal(nan?.passed, false, 'the NaN test fails')
  t.match(nan?.functions?.alertContext?.error, /ValueError: Out of range float values/)
  t.equal(five?.passed, true, `the next test of the same run passes: ${five?.error}`)
  // Detection: the record after the NaN one is still evaluated in the same run.
  const python = createPythonEngine({ command: 'python3', poolSize: 1, timeoutMs: 5000 })
  t.teardown(() => python.pool.close())
  const rule = {
    kind: 'python' as const,
    id: 'Py.Nan',
    path: 'rules/nan.yml',
    data: { AnalysisType: 'rule', RuleID: 'Py.Nan', Filename: 'nan.py', LogTypes: ['Editor.Audit'] },
    pythonSource: source,
    pythonPath: 'rules/nan.py',
  }
  const out = await python.evaluateBatch(rule, contextWith(), [{ bytes: 'NaN' }, { bytes: '5' }])
  t.notOk((out as { error?: unknown }).error, 'the batch is not stopped')
  t.match(out, {
    results: [
      { functions: { detection: { output: true }, alertContext: { output: null, error: /Out of range float/ } } },
      { functions: { detection: { output: true }, alertContext: { output: { bytes: 5 }, error: null } } },
    ],
  })
})
