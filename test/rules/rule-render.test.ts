// Rendering a rule back into a hand-written file (rules/rule-render.ts): what a person wrote stays
// unless the rule's meaning changed there — default-valued keys, a severity's spelling, numbers in
// Reports, `Mocks: []`, layout and comments — and a changed scalar changes only its own text.
import t from 'tap'
import { renderRuleFile } from '../../src/rules/rule-render.js'

const FILE = `AnalysisType: rule
RuleID: Render.Me
Enabled: true
LogTypes: [AWS.CloudTrail]     # flow style, spaced comment
Severity: high
Threshold: 1
DedupPeriodMinutes: 60
Tags: []
Reports: { CIS: [3.10] }
Detection:
  - KeyPath: eventName
    Condition: Equals
    Value: DeleteTrail
Tests:
  - Name: one
    ExpectedResult: true
    Mocks: []
    Log: { eventName: DeleteTrail }
`

/** The rule as the API maps it to file form (defaults left out, canonical spellings). */
const data = (extra: Record<string, unknown> = {}) => ({
  AnalysisType: 'rule',
  RuleID: 'Render.Me',
  Enabled: true,
  LogTypes: ['AWS.CloudTrail'],
  Severity: 'High',
  Reports: { CIS: ['3.10'] },
  Detection: [{ KeyPath: 'eventName', Condition: 'Equals', Value: 'DeleteTrail' }],
  Tests: [{ Name: 'one', ExpectedResult: true, Log: { eventName: 'DeleteTrail' } }],
  ...extra,
})

const changedLines = (before: string, after: string) => {
  const a = before.split('\n')
  const b = after.split('\n')
  return b.flatMap((line, i) => (line === a[i] ? [] : [`${a[i]} → ${line}`]))
}

t.test('the same rule renders the file byte for byte', async (t) => {
  t.equal(renderRuleFile('simple', data(), FILE), FILE)
})

t.test('a changed scalar changes its own text only', async (t) => {
  t.same(changedLines(FILE, renderRuleFile('simple', data({ Threshold: 3 }), FILE)), ['Threshold: 1 → Threshold: 3'])
  t.same(changedLines(FILE, renderRuleFile('simple', data({ Severity: 'Low' }), FILE)), [
    'Severity: high → Severity: Low',
  ])
  t.same(changedLines(FILE, renderRuleFile('simple', data({ LogTypes: ['GCP.AuditLog'] }), FILE)), [
    'LogTypes: [AWS.CloudTrail]     # flow style, spaced comment → LogTypes: [GCP.AuditLog]     # flow style, spaced comment',
  ])
  // A string that would read as a number is quoted.
  t.same(changedLines(FILE, renderRuleFile('simple', data({ Reports: { CIS: ['3.20'] } }), FILE)), [
    'Reports: { CIS: [3.10] } → Reports: { CIS: ["3.20"] }',
  ])
})

t.test('a key the rule no longer has goes, unless the file says its default', async (t) => {
  const withTags = FILE.replace('Tags: []', 'Tags: [a]')
  const out = renderRuleFile('simple', data(), withTags)
  t.notMatch(out, /Tags:/, 'a non-default value the rule dropped is removed')
  t.match(out, /Threshold: 1\nDedupPeriodMinutes: 60\n/, 'defaults written by a person stay')
})

t.test('an anchored node is replaced, never edited through its alias', async (t) => {
  const anchored = `AnalysisType: rule
RuleID: Render.Me
Enabled: true
LogTypes: &types [AWS.CloudTrail]
SummaryAttributes: *types
Severity: High
Detection:
  - KeyPath: eventName
    Condition: Equals
    Value: DeleteTrail
`
  const out = renderRuleFile(
    'simple',
    {
      AnalysisType: 'rule',
      RuleID: 'Render.Me',
      Enabled: true,
      LogTypes: ['GCP.AuditLog'],
      Severity: 'High',
      SummaryAttributes: ['AWS.CloudTrail'],
      Detection: [{ KeyPath: 'eventName', Condition: 'Equals', Value: 'DeleteTrail' }],
    },
    anchored,
  )
  t.match(out, /LogTypes:\n {2}- GCP\.AuditLog\n/)
  t.match(out, /SummaryAttributes: \*types\n|SummaryAttributes:\n {2}- AWS\.CloudTrail\n/)
})
