// `rulekeeper test` / `validate` over a folder with policies (docs/policies.md): their tests run and
// count like rules' (the same JSON, kind `policy`), the panther_analysis_tool selections reach them
// (`--filter PolicyID=…`, `--filter ResourceTypes=…`, `--filter AnalysisType=policy`, `--kind
// policy`), and `validate` finds a module without policy(resource).
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { runCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/rulekeeper.js'

function policyFile(id: string, py: string, resourceType: string, tests: Array<[string, boolean, string]>): string {
  const cases = tests
    .map(
      ([name, expected, v]) =>
        `  - Name: ${name}\n    ExpectedResult: ${expected}\n    Resource:\n      Versioning: ${v}\n`,
    )
    .join('')
  return `AnalysisType: policy\nFilename: ${py}\nPolicyID: ${id}\nEnabled: true\nResourceTypes:\n  - ${resourceType}\nSeverity: Medium\nTests:\n${cases}`
}

const VERSIONED = 'def policy(resource):\n    return resource.get("Versioning") == "Enabled"\n'

function tree(): string {
  const dir = tempDir('rk-policies-')
  const put = (p: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true })
    fs.writeFileSync(path.join(dir, p), text)
  }
  put(
    'policies/s3.yml',
    policyFile('AWS.S3.Versioned', 's3.py', 'AWS.S3.Bucket', [
      ['versioned', true, 'Enabled'],
      ['suspended', false, 'Suspended'],
    ]),
  )
  put('policies/s3.py', VERSIONED)
  // Its second test expects the wrong thing: one failure.
  put(
    'policies/ddb.yml',
    policyFile('AWS.DynamoDB.Versioned', 'ddb.py', 'AWS.DynamoDB.Table', [
      ['on', true, 'Enabled'],
      ['off but expected compliant', true, 'Off'],
    ]),
  )
  put('policies/ddb.py', VERSIONED)
  put(
    'rules/a.yml',
    'AnalysisType: rule\nRuleID: A.Rule\nEnabled: true\nLogTypes: [AWS.CloudTrail]\nSeverity: Low\nDetection:\n  - KeyPath: a\n    Condition: Equals\n    Value: 1\nTests:\n  - Name: hit\n    ExpectedResult: true\n    Log: { a: 1 }\n',
  )
  return dir
}

const json = async (args: string[]) => {
  const r = await runCli(args)
  return { ...r, report: JSON.parse(r.stdout) }
}
const ids = (report: { rules: Array<{ id: string }> }) => report.rules.map((r) => r.id).sort()

t.test('test --json: policies run and count like rules, kind policy', async (t) => {
  const dir = tree()
  const { code, report } = await json(['test', dir, '--json'])
  t.equal(code, 1, 'a failing policy test fails the run')
  t.match(report.summary, { files: 3, valid: 3, invalid: 0, unsupported: 0, rules: 3, tests: 5, passed: 4, failed: 1 })
  const ddb = report.rules.find((r: { id: string }) => r.id === 'AWS.DynamoDB.Versioned')
  t.match(ddb, {
    kind: 'policy',
    path: 'policies/ddb.yml',
    valid: true,
    tests: [
      { name: 'on', expected: true, actual: true, passed: true, error: null },
      { name: 'off but expected compliant', expected: true, actual: false, passed: false },
    ],
  })
  t.match(
    report.files.find((f: { path: string }) => f.path === 'policies/s3.yml'),
    { status: 'valid', analysisType: 'policy', id: 'AWS.S3.Versioned', reason: null },
  )
})

t.test('the selections of panther_analysis_tool reach policies', async (t) => {
  const dir = tree()
  const byId = await json(['test', dir, '--json', '--filter', 'PolicyID=AWS.S3.Versioned'])
  t.equal(byId.code, 0, byId.stderr)
  t.same(ids(byId.report), ['AWS.S3.Versioned'])
  t.match(byId.report.summary, { tests: 2, passed: 2 })

  const byType = await json(['test', dir, '--json', '--filter', 'ResourceTypes=AWS.DynamoDB.Table'])
  t.same(ids(byType.report), ['AWS.DynamoDB.Versioned'])
  t.equal(byType.code, 1)

  const byAnalysisType = await json(['validate', dir, '--json', '--filter', 'AnalysisType=policy'])
  t.same(ids(byAnalysisType.report), ['AWS.DynamoDB.Versioned', 'AWS.S3.Versioned'])

  const byKind = await json(['test', dir, '--json', '--kind', 'policy'])
  t.same(ids(byKind.report), ['AWS.DynamoDB.Versioned', 'AWS.S3.Versioned'])

  const notPolicies = await json(['test', dir, '--json', '--filter', 'AnalysisType!=policy'])
  t.same(ids(notPolicies.report), ['A.Rule'])
  t.equal(notPolicies.code, 0)
})

t.test('human output: [PASS]/[FAIL] per policy test', async (t) => {
  const r = await runCli(['test', tree(), '--kind', 'policy'])
  t.equal(r.code, 1)
  t.match(r.stdout, /\[PASS\] AWS\.S3\.Versioned: versioned/)
  t.match(r.stdout, /\[FAIL\] AWS\.DynamoDB\.Versioned: off but expected compliant/)
})

t.test('validate: a policy module without policy(resource) is invalid', async (t) => {
  const dir = tree()
  fs.writeFileSync(path.join(dir, 'policies/ddb.py'), 'def rule(event):\n    return True\n')
  // A policy named by a rule's key: the tool requires PolicyID.
  fs.writeFileSync(
    path.join(dir, 'policies/ruleid.yml'),
    'AnalysisType: policy\nFilename: s3.py\nRuleID: AWS.S3.ByRuleID\nEnabled: true\nSeverity: Low\n',
  )
  const { code, report } = await json(['validate', dir, '--json'])
  t.equal(code, 1)
  const ddb = report.rules.find((r: { id: string }) => r.id === 'AWS.DynamoDB.Versioned')
  t.match(ddb, { valid: false, errors: [{ message: 'policies/ddb.py defines no policy(resource) function' }] })
  const byRuleId = report.files.find((f: { path: string }) => f.path === 'policies/ruleid.yml')
  t.match(byRuleId, { status: 'invalid' })
  t.match(
    byRuleId.problems.map((p: { message: string }) => p.message),
    ['PolicyID is required', /unknown key RuleID/],
  )
})
