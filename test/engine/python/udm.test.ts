// event.udm() with Panther's semantics (panther_core's PantherEvent.udm; docs/python-rules.md), one
// small rule per case, run through the scheduled-rule engine (the runtime Python streaming rules
// share): the data model of the test's LogType else the rule's first log type, Path as a key path or
// a JSONPath, Method called with the event, a mapped name with nothing found, the p_udm and event
// fallbacks, several keys, no data model, a disabled one, and a data model that fails to load.
import t from 'tap'
import { createPythonEngine } from '../../../src/engine/python/index.js'
import type { SupportFile } from '../../../src/rules/model.js'
import { contextWith, dataModelFile, exampleDataModel, inlineRule, type InlineTest } from './fixtures.js'

const { engine, pool } = createPythonEngine({ command: 'python3', poolSize: 2, timeoutMs: 5000 })
t.teardown(() => pool.close())

const AUDIT = dataModelFile(
  'Standard.Audit',
  ['Audit.Log'],
  [
    { Name: 'actor_user', Path: 'user_email' },
    { Name: 'dotted', Path: 'actor.name' },
    { Name: 'source_ip', Path: '$.ip_address' },
    { Name: 'email', Path: '$.events[*].parameters[?(@.name == "USER_EMAIL")].value' },
    { Name: 'any_role', Path: '$.grants[*].role' },
    { Name: 'quoted', Path: '"destination.ip"' },
    { Name: 'outcome', Method: 'get_outcome' },
    { Name: 'mutate', Method: 'try_mutate' },
    { Name: 'details', Path: 'details' },
  ],
  [
    'def get_outcome(event):',
    '    ok = event.deep_get("login", "success")',
    '    return None if ok is None else ("success" if ok else "failure")',
    '',
    'def try_mutate(event):',
    '    event["x"] = 1',
    '',
  ].join('\n'),
)
const OTHER = dataModelFile('Standard.Other', ['Other.Log'], [{ Name: 'actor_user', Path: 'other_user' }])
const DISABLED = dataModelFile('Standard.Off', ['Off.Log'], [{ Name: 'actor_user', Path: 'user_email' }], undefined, {
  Enabled: false,
})

interface Case {
  name: string
  /** The body of `rule(event)`, returning True when the case holds. */
  expr: string
  log: Record<string, unknown>
  logType?: string
  ruleLogTypes?: string[]
  models?: SupportFile[]
  /** The outcome's error must match (the case is a failing test). */
  error?: RegExp
}

const CASES: Case[] = [
  { name: 'Path: a key', expr: 'event.udm("actor_user") == "sam@example.com"', log: { user_email: 'sam@example.com' } },
  { name: 'Path: a dotted key path', expr: 'event.udm("dotted") == "sam"', log: { actor: { name: 'sam' } } },
  { name: 'Path: a JSONPath from $.', expr: 'event.udm("source_ip") == "192.0.2.1"', log: { ip_address: '192.0.2.1' } },
  {
    name: 'Path: a JSONPath with a filter',
    expr: 'event.udm("email") == "u@example.com"',
    log: {
      events: [
        {
          parameters: [
            { name: 'OTHER', value: 'x' },
            { name: 'USER_EMAIL', value: 'u@example.com' },
          ],
        },
      ],
    },
  },
  {
    name: 'Path: a quoted key holding a dot',
    expr: 'event.udm("quoted") == "1.1.1.1"',
    log: { 'destination.ip': '1.1.1.1' },
  },
  {
    name: 'Path: keys match exactly (case-sensitively), unlike event[...]',
    expr: 'event.udm("actor_user") is None and event["user_email"] == "x"',
    log: { USER_EMAIL: 'x' },
  },
  {
    name: 'Path: a value found is returned read-only',
    expr: 'event.udm("details") == {"a": [1]} and event.udm("details")["a"] == [1] and _raises(lambda: _set(event.udm("details")))',
    log: { details: { a: [1] } },
  },
  {
    name: 'Path: one match is the value, even a list element',
    expr: 'event.udm("any_role") == "admin"',
    log: { grants: [{ role: 'admin' }] },
  },
  {
    name: 'Path: several matches raise, as Panther does',
    expr: 'event.udm("any_role") is not None',
    log: { grants: [{ role: 'admin' }, { role: 'member' }] },
    error: /JSONPath \[\$\.grants\[\*\]\.role\] in DataModel \[Standard\.Audit\], matched multiple fields/,
  },
  {
    name: 'a mapped Path that finds nothing is None: no p_udm or event fallback',
    expr: 'event.udm("actor_user") is None and event.udm("actor_user", default="d") == "d"',
    log: { p_udm: { actor_user: 'from-p_udm' }, actor_user: 'from-event' },
  },
  {
    name: 'Method: called with the event, its result returned',
    expr: 'event.udm("outcome") == "failure"',
    log: { login: { success: false } },
  },
  {
    name: 'Method: None is returned as None (the default is not used)',
    expr: 'event.udm("outcome") is None and event.udm("outcome", default="d") is None',
    log: {},
  },
  {
    name: 'Method: the event it gets is read-only',
    expr: 'event.udm("mutate")',
    log: {},
    error: /TypeError: the event is read-only/,
  },
  {
    name: 'a name the data model does not map: p_udm first',
    expr: 'event.udm("unmapped") == "from-p_udm"',
    log: { p_udm: { unmapped: 'from-p_udm' }, unmapped: 'from-event' },
  },
  {
    name: 'a name the data model does not map: then the event itself',
    expr: 'event.udm("unmapped") == "from-event"',
    log: { unmapped: 'from-event' },
  },
  {
    name: 'a name the data model does not map: then the default',
    expr: 'event.udm("unmapped") is None and event.udm("unmapped", default=7) == 7',
    log: {},
  },
  {
    name: 'the fallbacks skip falsy values (0, "", False): the default instead',
    expr: 'event.udm("zero", default="d") == "d" and event.udm("empty", default="d") == "d"',
    log: { p_udm: { zero: 0 }, zero: 0, empty: '' },
  },
  {
    name: 'several keys: no data model, p_udm.a.b then a.b',
    expr: 'event.udm("actor", "name") == "pu" and event.udm("only_event", "x") == 1',
    log: { p_udm: { actor: { name: 'pu' } }, actor: { name: 'ev' }, only_event: { x: 1 } },
  },
  {
    name: 'no data model for the log type: p_udm, the event, the default',
    expr: 'event.udm("actor_user") == "ev" and event.udm("nope", default=3) == 3',
    log: { actor_user: 'ev', user_email: 'not-used' },
    ruleLogTypes: ['Unmodelled.Log'],
  },
  {
    name: "the test's LogType selects the data model",
    expr: 'event.udm("actor_user") == "other"',
    log: { other_user: 'other', user_email: 'audit' },
    logType: 'Other.Log',
  },
  {
    name: "without a LogType, the rule's first log type selects it",
    expr: 'event.udm("actor_user") == "audit"',
    log: { other_user: 'other', user_email: 'audit' },
    ruleLogTypes: ['Audit.Log', 'Other.Log'],
  },
  {
    name: 'a disabled data model is not used',
    expr: 'event.udm("actor_user") is None',
    log: { user_email: 'x' },
    logType: 'Off.Log',
  },
  {
    name: 'a data model whose module lacks a Method fails the test, named',
    expr: 'True',
    log: {},
    models: [dataModelFile('Broken.Model', ['Audit.Log'], [{ Name: 'f', Method: 'missing' }], 'X = 1\n')],
    error: /the data model Broken\.Model failed to load: AssertionError: DataModel is missing method named \[missing\]/,
  },
]

const HELPERS = `
def _raises(fn):
    try:
        fn()
    except TypeError:
        return True
    return False

def _set(d):
    d["a"] = 2
`

for (const c of CASES) {
  t.test(c.name, async (t) => {
    const test: InlineTest = { name: c.name, expected: true, log: c.log, ...(c.logType ? { logType: c.logType } : {}) }
    const rule = inlineRule(`${HELPERS}\ndef rule(event):\n    return bool(${c.expr})\n`, [test], {
      LogTypes: c.ruleLogTypes ?? ['Audit.Log'],
    })
    const [o] = await engine.runTests(rule, contextWith(...(c.models ?? [AUDIT, OTHER, DISABLED])))
    if (c.error) {
      t.equal(o!.passed, false)
      t.match(o!.error, c.error)
    } else t.equal(o!.passed, true, o!.error ?? '')
  })
}

t.test('the shared example data model (Path, $.-path and Method), read through udm()', async (t) => {
  const model = exampleDataModel()
  const source = [
    'def rule(event):',
    '    return event.udm("event_outcome") == "failure"',
    '',
    'def title(event):',
    `    return f"Failed editor logins for [{event.udm('actor_user')}]"`,
    '',
    'def alert_context(event):',
    '    return {"actor": event.udm("actor_user"), "ip": event.udm("source_ip")}',
    '',
  ].join('\n')
  const log = { user_email: 'kim@example.com', ip_address: '203.0.113.99', login: { success: false } }
  const rule = inlineRule(
    source,
    [
      { name: 'failed', expected: true, log, logType: 'Editor.Audit' },
      { name: 'succeeded', expected: false, log: { ...log, login: { success: true } } },
      { name: 'flipped', expected: false, log, logType: 'Editor.Audit' },
    ],
    { LogTypes: ['Editor.Audit'] },
  )
  const [failed, succeeded, flipped] = await engine.runTests(rule, contextWith(model))
  t.equal(failed!.passed, true, failed!.error ?? '')
  t.same(failed!.functions?.title, { output: 'Failed editor logins for [kim@example.com]', error: null })
  t.same(failed!.functions?.alertContext?.output, { actor: 'kim@example.com', ip: '203.0.113.99' })
  t.equal(succeeded!.passed, true, succeeded!.error ?? '')
  t.equal(flipped!.passed, false)
})
