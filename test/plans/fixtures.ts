// Shared by the plan tests: a simple Editor.Audit rule whose one unit test fails (it expects a match
// on a `deploy` command the detection never matches).
export function failingRule(id: string): string {
  return `AnalysisType: rule
RuleID: ${id}
Enabled: true
LogTypes:
  - Editor.Audit
Severity: Low
Detection:
  - KeyPath: team_command.command_name
    Condition: Equals
    Value: never
Tests:
  - Name: expects a match it will not get
    ExpectedResult: true
    Log: { team_command: { command_name: deploy } }
`
}
