// What the real format accepts (detections.md §5.2), read by the loader every reader shares (the
// index, `rulekeeper validate` / `test`), on a small tree built here: InlineFilters on a scheduled
// rule (applied before rule()), numbers in Reports lists (strings as written), a test's LogType,
// correlation transitions without Match or against the list order. And one file's structure and
// language problems reported together, each with line and column (issue 13, point 5).
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { createEngineRegistry, closeEngines } from '../../src/engine/registry.js'
import { loadDirectory } from '../../src/service/directory-loader.js'
import { runCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/rulekeeper.js'

const TREE: Record<string, string> = {
  'rules/aws/root.yml': `AnalysisType: rule
RuleID: Accepted.Simple
Enabled: true
LogTypes: [AWS.CloudTrail]
Severity: High
Reports:
  CIS: [3.10, 3.5, 4]
  MITRE ATT&CK: [TA0005:T1562]
Detection:
  - KeyPath: eventName
    Condition: Equals
    Value: DeleteTrail
Tests:
  - Name: delete trail
    LogType: AWS.CloudTrail
    ExpectedResult: true
    Log: { eventName: DeleteTrail }
`,
  'scheduled/grants.yml': `AnalysisType: scheduled_rule
Filename: grants.py
RuleID: Accepted.Scheduled
Enabled: true
ScheduledQueries: [Some.Query]
Severity: Medium
InlineFilters:
  - KeyPath: actor.type
    Condition: Equals
    Value: user
Tests:
  - Name: a person with many grants
    ExpectedResult: true
    Log: { grants: 5, actor: { type: user } }
  - Name: a service is filtered out, so rule() is not asked
    ExpectedResult: false
    Log: { grants: 5, actor: { type: service } }
  - Name: a missing field passes a filter (§1.4)
    ExpectedResult: true
    Log: { grants: 5 }
`,
  'scheduled/grants.py': 'def rule(event):\n    return event.get("grants", 0) > 1\n',
  'correlation/reversed.yml': `AnalysisType: correlation_rule
RuleID: Accepted.Correlation
Enabled: true
Severity: High
Detection:
  - Sequence:
      - ID: Deleted
        RuleID: Accepted.Simple
      - ID: Created
        RuleID: Accepted.Scheduled
    Transitions:
      - ID: Created FOLLOWED BY Deleted
        From: Created
        To: Deleted
        WithinTimeFrameMinutes: 10
    LookbackWindowMinutes: 60
    Schedule: { RateMinutes: 60, TimeoutMinutes: 5 }
Tests:
  - Name: created then deleted
    ExpectedResult: true
    RuleOutputs:
      - ID: Created
        Matches: { user: { alice: [0] } }
      - ID: Deleted
        Matches: { user: { bob: [5] } }
  - Name: deleted then created (the list order)
    ExpectedResult: false
    RuleOutputs:
      - ID: Deleted
        Matches: { user: { alice: [0] } }
      - ID: Created
        Matches: { user: { alice: [5] } }
`,
}

const BAD = `AnalysisType: rule
RuleID: Both.Problems
Enabled: true
LogTypes: [AWS.CloudTrail]
Severity: Severe
Detection:
  - KeyPath: eventName
    Condition: Equalz
    Value: DeleteTrail
`

function writeTree(files: Record<string, string>): string {
  const dir = tempDir('rk-accepted-')
  for (const [p, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true })
    fs.writeFileSync(path.join(dir, p), text)
  }
  return dir
}

t.test('the loader accepts the §5.2 keys and shapes', async (t) => {
  const engines = createEngineRegistry()
  t.teardown(() => closeEngines(engines))
  const index = await loadDirectory(writeTree(TREE), engines)
  const files = [...index.files.values()].filter((f) => f.kind !== undefined)
  t.same(
    files.map((f) => [f.path, f.errors]).sort(),
    [
      ['correlation/reversed.yml', []],
      ['rules/aws/root.yml', []],
      ['scheduled/grants.yml', []],
    ],
    'every file is valid',
  )
  const simple = files.find((f) => f.id === 'Accepted.Simple')!.rule!
  t.same(simple.view.reports, { CIS: ['3.10', '3.5', '4'], 'MITRE ATT&CK': ['TA0005:T1562'] })
  t.equal((simple.view.tests as Array<{ logType?: string }>)[0]!.logType, 'AWS.CloudTrail')
  const scheduled = files.find((f) => f.id === 'Accepted.Scheduled')!.rule!
  t.match(scheduled.view.inlineFilters, /KeyPath: actor\.type/)
})

t.test('`rulekeeper test` runs them: filters before rule(), transitions in their own order', async (t) => {
  const r = await runCli(['test', writeTree(TREE), '--json'])
  t.equal(r.code, 0, r.stdout + r.stderr)
  const report = JSON.parse(r.stdout) as {
    rules: Array<{ id: string; valid: boolean; tests: Array<{ name: string; passed: boolean | null }> }>
  }
  const byId = new Map(report.rules.map((x) => [x.id, x]))
  t.same(
    byId.get('Accepted.Scheduled')?.tests.map((x) => x.passed),
    [true, true, true],
  )
  t.same(
    byId.get('Accepted.Correlation')?.tests.map((x) => x.passed),
    [true, true],
  )
})

t.test('a filtered-out event expected to match fails with the reason', async (t) => {
  const flipped = TREE['scheduled/grants.yml']!.replace(
    'a service is filtered out, so rule() is not asked\n    ExpectedResult: false',
    'a service is filtered out, so rule() is not asked\n    ExpectedResult: true',
  )
  const r = await runCli(['test', writeTree({ ...TREE, 'scheduled/grants.yml': flipped }), '--json'])
  t.equal(r.code, 1)
  const report = JSON.parse(r.stdout) as {
    rules: Array<{ id: string; tests: Array<{ name: string; passed: boolean | null; error: string | null }> }>
  }
  const tests = report.rules.find((x) => x.id === 'Accepted.Scheduled')!.tests
  t.match(tests[1], { passed: false, error: /InlineFilters did not pass/ })
})

t.test('one file: a bad severity and a bad condition are reported together, located', async (t) => {
  const engines = createEngineRegistry()
  t.teardown(() => closeEngines(engines))
  const index = await loadDirectory(writeTree({ 'rules/bad.yml': BAD }), engines)
  const errors = index.files.get('rules/bad.yml')!.errors
  t.equal(errors.length, 2, JSON.stringify(errors))
  t.match(errors, [
    { path: ['Severity'], message: /Severity must be one of/, line: 5, column: 1 },
    { path: ['Detection', 0, 'Condition'], message: /Equalz/, line: 8, column: 5 },
  ])
  // The same through `rulekeeper validate`.
  const r = await runCli(['validate', writeTree({ 'rules/bad.yml': BAD }), '--json'])
  t.equal(r.code, 1)
  const rule = (JSON.parse(r.stdout) as { rules: Array<{ errors: unknown[] }> }).rules[0]!
  t.match(rule.errors, [
    { message: /Severity must be one of/, line: 5, column: 1 },
    { message: /Equalz/, line: 8, column: 5 },
  ])
})
