// The selection habits of panther_analysis_tool (detections.md §5.3), pure: `--filter` parsing and
// matching (values OR-ed, filters AND-ed, `!=`, Enabled as a boolean, Severity and Tags ignoring
// case), `--ignore-files` globs, `--minimum-tests` coverage, repeatable options.
import t from 'tap'
import { parseArgs, UsageError } from '../../src/cli/args.js'
import { coverageProblem, globToRegExp, ignoreMatcher, matchesFilters, parseFilter } from '../../src/cli/selection.js'

const rule = {
  AnalysisType: 'rule',
  RuleID: 'AWS.Root.Login',
  Severity: 'High',
  Enabled: true,
  LogTypes: ['AWS.CloudTrail', 'GCP.Audit'],
  Tags: ['AWS', 'Initial Access'],
  Threshold: 5,
}
const pass = (...args: string[]) => matchesFilters(rule, args.map(parseFilter))

t.test('--filter KEY=V1,V2: values OR-ed, lists match on any item, filters AND-ed', async (t) => {
  t.ok(pass('RuleID=Other,AWS.Root.Login'))
  t.notOk(pass('RuleID=aws.root.login'), 'ids are exact')
  t.ok(pass('LogTypes=Okta.SystemLog,GCP.Audit'))
  t.notOk(pass('LogTypes=gcp.audit'), 'log types are exact')
  t.ok(pass('LogTypes=GCP.Audit', 'Severity=High'))
  t.notOk(pass('LogTypes=GCP.Audit', 'Severity=Low'), 'every filter must hold')
  t.ok(pass('Threshold=5'), 'numbers compare as written')
  t.ok(pass('AnalysisType=rule'))
  t.ok(pass('id=AWS.Root.Login'), 'the older id= spelling')
})

t.test('Severity and Tags ignore case; Enabled is a boolean', async (t) => {
  t.ok(pass('Severity=HIGH'))
  t.ok(pass('Severity=high,low'))
  t.ok(pass('Tags=aws'))
  t.ok(pass('tags=initial access'), 'key names ignore case too')
  t.ok(pass('Enabled=true'))
  t.ok(pass('Enabled=yes'))
  t.notOk(pass('Enabled=false'))
  t.notOk(matchesFilters({ ...rule, Enabled: false }, [parseFilter('Enabled=true')]))
})

t.test('--filter KEY!=V: none of the values; a missing key passes != and fails =', async (t) => {
  t.notOk(pass('Severity!=high'))
  t.ok(pass('Severity!=Low,Info'))
  t.notOk(pass('LogTypes!=GCP.Audit'), 'any item of a list excludes')
  t.ok(pass('Reports!=x'))
  t.notOk(pass('Reports=x'))
  t.ok(pass('Severity!=Low', 'Tags=AWS'))
})

t.test('bad filters are usage errors', async (t) => {
  for (const bad of ['Severity', 'Severity=', '=High', 'Colour=red', 'Enabled=maybe', 'AnalysisType=rul'])
    t.ok(
      (() => {
        try {
          parseFilter(bad)
        } catch (err) {
          return err instanceof UsageError
        }
        return false
      })(),
      bad,
    )
})

t.test('--ignore-files: globs relative to DIR; a bare name matches at any depth', async (t) => {
  const ignored = ignoreMatcher(['simple_rules/aws/*.yml', 'draft_*.yaml', './policies/**', 'exact/path.yml'])
  t.ok(ignored('simple_rules/aws/root.yml'))
  t.notOk(ignored('simple_rules/aws/deep/root.yml'), '* stays within a folder')
  t.ok(ignored('draft_one.yaml'))
  t.ok(ignored('rules/x/draft_two.yaml'))
  t.ok(ignored('policies/a/b.yml'))
  t.ok(ignored('exact/path.yml'))
  t.notOk(ignored('simple_rules/okta/x.yml'))
  t.ok(globToRegExp('**/x.yml').test('x.yml'), '**/ also matches no folder')
  t.ok(globToRegExp('a?c.yml').test('abc.yml'))
  t.notOk(globToRegExp('a.yml').test('axyml'), 'dots are literal')
})

t.test('--minimum-tests: fewer tests fail; from 2 on, one true and one false test are needed', async (t) => {
  const yes = { ExpectedResult: true }
  const no = { ExpectedResult: false }
  t.equal(coverageProblem([yes], 0), null)
  t.equal(coverageProblem([yes], 1), null)
  t.match(coverageProblem([], 1), /1 tests required, 0 found/)
  t.match(coverageProblem([yes, yes], 2), /one test expecting true and one expecting false/)
  t.equal(coverageProblem([yes, no], 2), null)
  t.match(coverageProblem([yes, no], 3), /3 tests required, 2 found/)
})

t.test('repeatable options collect every value, PAT style (--filter A=1 B=2) included', async (t) => {
  const args = parseArgs(['--filter', 'A=1', 'B!=2', 'dir', '--filter=C=3', '--json'], [], ['json'], {
    filter: /^[A-Za-z][\w-]*!?=/,
  })
  t.same(args.lists.filter, ['A=1', 'B!=2', 'C=3'])
  t.same(args.positionals, ['dir'])
  t.equal(args.options.json, true)
})
