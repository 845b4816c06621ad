// Policies tested as panther_analysis_tool tests them (docs/policies.md), through the engine the
// registry builds (the real Python sandbox): policy(resource) True is compliant and False the alert;
// a test expecting False fails on any function's error, one expecting True only on policy()'s
// outcome; every other function runs on every test; the resource is the plain mapping the test
// wrote; Mocks, globals and the type rules are those of rules; a module without policy() is invalid.
import t from 'tap'
import type { RuleEngine } from '../../../src/engine/engine.js'
import { closeEngines, createEngineRegistry } from '../../../src/engine/registry.js'
import type { RuleFile } from '../../../src/rules/model.js'
import { contextWith, globalFile } from '../python/fixtures.js'

const engines = createEngineRegistry({ python: { command: 'python3', poolSize: 2, timeoutMs: 3000 } })
t.teardown(() => closeEngines(engines))
const engine = engines.policy as RuleEngine

interface PolicyTest {
  name: string
  expected: boolean
  resource?: Record<string, unknown>
  mocks?: Array<{ objectName: string; returnValue: unknown }>
}

/** A policy in file form around inline Python. */
function inlinePolicy(source: string, tests: PolicyTest[]): RuleFile {
  return {
    kind: 'policy',
    id: 'Test.Policy',
    path: 'policies/inline.yml',
    data: {
      AnalysisType: 'policy',
      PolicyID: 'Test.Policy',
      Enabled: true,
      Filename: 'inline.py',
      ResourceTypes: ['AWS.S3.Bucket'],
      Severity: 'High',
      Tests: tests.map((x) => ({
        Name: x.name,
        ExpectedResult: x.expected,
        Resource: x.resource ?? {},
        ...(x.mocks ? { Mocks: x.mocks } : {}),
      })),
    },
    pythonSource: source,
    pythonPath: 'policies/inline.py',
  }
}

const VERSIONING = 'def policy(resource):\n    return resource.get("Versioning") == "Enabled"\n'

t.test('the registry has a policy engine', async (t) => {
  t.equal(engine?.kind, 'policy')
  t.type(engine?.checkAsync, 'function')
  t.equal(engine?.live, undefined, 'no detection: there is no resource ingest')
})

t.test('True is compliant, False the alert: ExpectedResult is what policy() returns', async (t) => {
  const outcomes = await engine.runTests(
    inlinePolicy(VERSIONING, [
      { name: 'compliant', expected: true, resource: { Versioning: 'Enabled' } },
      { name: 'not compliant', expected: false, resource: { Versioning: 'Suspended' } },
      { name: 'compliant, expected not', expected: false, resource: { Versioning: 'Enabled' } },
      { name: 'not compliant, expected compliant', expected: true, resource: {} },
    ]),
    contextWith(),
  )
  t.match(outcomes, [
    { name: 'compliant', expected: true, actual: true, passed: true, error: null },
    { name: 'not compliant', expected: false, actual: false, passed: true, error: null },
    { name: 'compliant, expected not', expected: false, actual: true, passed: false },
    { name: 'not compliant, expected compliant', expected: true, actual: false, passed: false },
  ])
})

const AUX = `
def policy(resource):
    return resource["Public"] is False

def title(resource):
    return f"bucket {resource['Name']} is public"

def dedup(resource):
    return resource["Name"]

def alert_context(resource):
    return {"name": resource["Name"]}

def severity(resource):
    return "DEFAULT"

def description(resource):
    return "public bucket"

def reference(resource):
    return "https://example.com/s3"

def runbook(resource):
    return "make it private"

def destinations(resource):
    return ["slack"]
`

t.test(
  'every other function runs on every test, its output reported (for the alert, as Panther would raise it)',
  async (t) => {
    const [alerting, compliant] = await engine.runTests(
      inlinePolicy(AUX, [
        { name: 'public', expected: false, resource: { Name: 'logs', Public: true } },
        { name: 'private', expected: true, resource: { Name: 'logs', Public: false } },
      ]),
      contextWith(),
    )
    t.equal(alerting?.passed, true, alerting?.error ?? '')
    t.same(alerting?.functions, {
      detection: { output: false, error: null },
      title: { output: 'bucket logs is public', error: null },
      dedup: { output: 'logs', error: null },
      alertContext: { output: { name: 'logs' }, error: null },
      severity: { output: 'HIGH', error: null },
      description: { output: 'public bucket', error: null },
      reference: { output: 'https://example.com/s3', error: null },
      runbook: { output: 'make it private', error: null },
      destinations: { output: ['slack'], error: null },
    })
    t.equal(compliant?.passed, true)
    t.equal(compliant?.functions?.title?.output, 'bucket logs is public', 'run for a compliant resource too')
  },
)

const TITLE_RAISES =
  'def policy(resource):\n    return resource.get("ok") is True\n\n\ndef title(resource):\n    return resource["missing"]\n'

t.test('an error of another function fails a test expecting the alert (False), not one expecting True', async (t) => {
  const [alert, compliant] = await engine.runTests(
    inlinePolicy(TITLE_RAISES, [
      { name: 'not compliant', expected: false, resource: { ok: false } },
      { name: 'compliant', expected: true, resource: { ok: true } },
    ]),
    contextWith(),
  )
  t.match(alert, { actual: false, passed: false, errored: true, error: /^title: KeyError: 'missing'/ })
  t.match(compliant, { actual: true, passed: true, errored: true }, 'as in the tool: only policy() decides it')
  t.match(compliant?.functions?.title?.error, /KeyError/)
})

t.test('policy() raising or returning a non-bool fails the test either way', async (t) => {
  const source =
    'def policy(resource):\n    if resource.get("raise"):\n        return resource["nope"]\n    return resource.get("value")\n'
  const outcomes = await engine.runTests(
    inlinePolicy(source, [
      { name: 'raises, expected compliant', expected: true, resource: { raise: true } },
      { name: 'raises, expected alert', expected: false, resource: { raise: true } },
      { name: 'None, expected alert', expected: false, resource: {} },
      { name: 'a number, expected compliant', expected: true, resource: { value: 1 } },
    ]),
    contextWith(),
  )
  t.match(outcomes, [
    { actual: null, passed: false, error: /^detection: KeyError: 'nope' \(policies\/inline\.py, line 3\)/ },
    { actual: null, passed: false, error: /^detection: KeyError/ },
    { actual: null, passed: false, error: 'detection: policy() returned NoneType, expected a bool' },
    { actual: null, passed: false, error: 'detection: policy() returned int, expected a bool' },
  ])
})

t.test('the resource is the plain mapping the test wrote: a dict, mutable, keys as written', async (t) => {
  const source = `
def policy(resource):
    checks = [
        type(resource) is dict,
        resource.get("name") is None and resource["Name"] == "logs",
        type(resource["Tags"]) is list,
    ]
    resource["seen"] = True
    resource["Tags"].append("x")
    return all(checks)

def title(resource):
    return "seen" if resource.get("seen") and resource["Tags"][-1] == "x" else "fresh"
`
  const [o] = await engine.runTests(
    inlinePolicy(source, [{ name: 'plain', expected: true, resource: { Name: 'logs', Tags: ['a'] } }]),
    contextWith(),
  )
  t.match(o, { passed: true, actual: true })
  t.equal(o?.functions?.title?.output, 'seen', 'every function of one test sees the same mapping')
})

t.test('Mocks replace names of the module; a mock naming nothing fails the test', async (t) => {
  const source =
    'def lookup(name):\n    raise RuntimeError("no network in tests")\n\n\ndef policy(resource):\n    return lookup(resource["Name"]) == "private"\n'
  const outcomes = await engine.runTests(
    inlinePolicy(source, [
      {
        name: 'mocked',
        expected: true,
        resource: { Name: 'logs' },
        mocks: [{ objectName: 'lookup', returnValue: 'private' }],
      },
      {
        name: 'bad mock',
        expected: true,
        resource: { Name: 'logs' },
        mocks: [{ objectName: 'nowhere', returnValue: 1 }],
      },
    ]),
    contextWith(),
  )
  t.match(outcomes[0], { passed: true })
  t.match(outcomes[1], { passed: false, error: /Mocks: 'nowhere' is not a name in the rule module/ })
})

t.test('a policy imports global helpers by GlobalID', async (t) => {
  const helpers = globalFile('aws_helpers', 'def is_public(resource):\n    return resource.get("Public") is True\n')
  const [o] = await engine.runTests(
    inlinePolicy('from aws_helpers import is_public\n\ndef policy(resource):\n    return not is_public(resource)\n', [
      { name: 'public', expected: false, resource: { Public: true } },
    ]),
    contextWith(helpers),
  )
  t.match(o, { passed: true, actual: false })
})

t.test('a module without policy(resource) is invalid, and its tests fail saying so', async (t) => {
  const rule = inlinePolicy('def rule(event):\n    return True\n', [{ name: 'any', expected: true }])
  const problems = await engine.checkAsync!(rule, contextWith())
  t.match(problems, [
    {
      path: ['Filename'],
      code: 'PythonMissingRule',
      message: 'policies/inline.py defines no policy(resource) function',
    },
  ])
  t.same(await engine.checkAsync!(inlinePolicy(VERSIONING, []), contextWith()), [], 'policy() defined: no problem')
  const [o] = await engine.runTests(rule, contextWith())
  t.match(o, { passed: false, error: 'detection: the module defines no policy(resource) function' })
})

t.test('check(): ExpectedResult must be a boolean, Mocks need an objectName', async (t) => {
  const rule = inlinePolicy(VERSIONING, [{ name: 'x', expected: true, mocks: [{ objectName: '', returnValue: 1 }] }])
  ;(rule.data.Tests as Array<Record<string, unknown>>)[0]!.ExpectedResult = 'yes'
  const { errors } = engine.check(rule, contextWith())
  t.match(errors, [
    { path: ['Tests', 0, 'ExpectedResult'], message: /true or false/ },
    { path: ['Tests', 0, 'Mocks', 0, 'objectName'] },
  ])
})
