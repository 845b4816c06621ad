// References of correlation rules: the ids in first-appearance order, the log types reached
// through simple rules, Python streaming rules and nested correlation rules, dangling references
// as warnings, and cycles reported (never followed forever).
import t from 'tap'
import {
  correlationEngine,
  correlationReferenceIds,
  resolveCorrelationLogTypes,
} from '../../../src/engine/correlation/index.js'
import type { RuleFile } from '../../../src/rules/model.js'
import { contextOf, link, ruleFile, sequenceData, step } from './helpers.js'

function correlation(id: string, refs: string[]): RuleFile {
  const data = sequenceData(refs.map((ref, i) => ({ ID: `S${i}`, RuleID: ref })))
  data.RuleID = id
  return ruleFile(data)
}

function simple(id: string, logTypes: string[]): RuleFile {
  return ruleFile({ RuleID: id, LogTypes: logTypes }, 'simple')
}

const python = (id: string, logTypes: string[]) => ({
  id,
  analysisType: 'rule',
  path: `rules/${id}.yml`,
  data: { AnalysisType: 'rule', RuleID: id, Filename: `${id}.py`, LogTypes: logTypes },
})

t.test('reference ids: first-appearance order, without duplicates, skipping malformed steps', async (t) => {
  const data = sequenceData([
    step('A'),
    step('B'),
    { ID: 'C', RuleID: 'R.A' },
    { ID: 'D' },
    'junk' as never,
    { ID: 'E', RuleID: 5 },
  ])
  t.same(correlationReferenceIds(data), ['R.A', 'R.B'])
  t.same(correlationReferenceIds({ Detection: 'nonsense' }), [])
  t.same(correlationReferenceIds({}), [])
})

t.test('log types: the sorted union over simple rules, Python rules and nested correlation rules', async (t) => {
  const ctx = contextOf(
    [
      simple('S.One', ['Okta.SystemLog', 'AWS.CloudTrail']),
      simple('S.Two', ['AWS.CloudTrail']),
      correlation('C.Inner', ['S.Two', 'P.Three']),
      ruleFile({ RuleID: 'Sched.X', ScheduledQueries: ['q'] }, 'scheduled'),
    ],
    [python('P.Three', ['GitHub.Audit'])],
  )
  const result = resolveCorrelationLogTypes(correlation('C.Outer', ['S.One', 'C.Inner', 'Sched.X']), ctx)
  t.same(result.logTypes, ['AWS.CloudTrail', 'GitHub.Audit', 'Okta.SystemLog'])
  t.same(result.problems, [])
})

t.test('a reference to no rule is a DanglingReference warning with its path', async (t) => {
  const rule = correlation('C.Outer', ['S.One', 'Gone.Rule'])
  const ctx = contextOf([simple('S.One', ['Okta.SystemLog'])])
  const result = resolveCorrelationLogTypes(rule, ctx)
  t.same(result.logTypes, ['Okta.SystemLog'])
  t.same(result.problems, [
    {
      path: ['Detection', 0, 'Sequence', 1, 'RuleID'],
      message: 'RuleID "Gone.Rule" names no rule in the repository',
      code: 'DanglingReference',
    },
  ])
  const check = correlationEngine.check(rule, ctx)
  t.same(check.errors, [])
  t.same(
    check.warnings.map((w) => w.code),
    ['DanglingReference'],
  )
})

t.test('a reference to a non-rule analysis file is dangling too', async (t) => {
  const ctx = contextOf([], [{ id: 'helpers', analysisType: 'global', path: 'global_helpers/helpers.yml', data: {} }])
  const result = resolveCorrelationLogTypes(correlation('C', ['helpers', 'x']), ctx)
  t.same(
    result.problems.map((p) => p.message),
    [
      'RuleID "helpers" names a global file (global_helpers/helpers.yml), not a rule',
      'RuleID "x" names no rule in the repository',
    ],
  )
})

t.test('a dangling reference further down belongs to the rule that holds it', async (t) => {
  const ctx = contextOf([correlation('C.Inner', ['Gone.Rule', 'S.One']), simple('S.One', ['A.Log'])])
  const result = resolveCorrelationLogTypes(correlation('C.Outer', ['C.Inner', 'S.One']), ctx)
  t.same(result.problems, [])
  t.same(result.logTypes, ['A.Log'])
})

t.test('cycles back to the rule are reported as ReferenceCycle errors, and end', async (t) => {
  const self = correlation('C.Self', ['C.Self', 'S.One'])
  const a = correlation('C.A', ['C.B', 'S.One'])
  const b = correlation('C.B', ['C.A', 'S.One'])
  const ctx = contextOf([self, a, b, simple('S.One', ['A.Log'])])
  const selfResult = resolveCorrelationLogTypes(self, ctx)
  t.same(selfResult.problems, [
    {
      path: ['Detection', 0, 'Sequence', 0, 'RuleID'],
      message: 'reference cycle: C.Self → C.Self; a correlation rule cannot depend on its own signals',
      code: 'ReferenceCycle',
    },
  ])
  t.same(selfResult.logTypes, ['A.Log'])
  const aResult = resolveCorrelationLogTypes(a, ctx)
  t.same(
    aResult.problems.map((p) => p.message),
    ['reference cycle: C.A → C.B → C.A; a correlation rule cannot depend on its own signals'],
  )
  t.same(aResult.logTypes, ['A.Log'])
  const check = correlationEngine.check(b, ctx)
  t.same(
    check.errors.map((e) => [e.code, e.message]),
    [['ReferenceCycle', 'reference cycle: C.B → C.A → C.B; a correlation rule cannot depend on its own signals']],
  )
})

t.test('a cycle that does not pass through the rule is not its problem, and still ends', async (t) => {
  const ctx = contextOf([correlation('C.X', ['C.Y', 'S.One']), correlation('C.Y', ['C.X']), simple('S.One', ['A.Log'])])
  const result = resolveCorrelationLogTypes(correlation('C.Top', ['C.X']), ctx)
  t.same(result.problems, [])
  t.same(result.logTypes, ['A.Log'])
})

t.test('a long chain of correlation rules is walked without recursion', async (t) => {
  const rules: RuleFile[] = [simple('S.End', ['End.Log'])]
  for (let i = 0; i < 20_000; i++) rules.push(correlation(`C.${i}`, [i === 0 ? 'S.End' : `C.${i - 1}`, 'S.End']))
  const byId = new Map(rules.map((r) => [r.id, r]))
  const result = resolveCorrelationLogTypes(correlation('C.Top', ['C.19999']), {
    findRule: (id) => byId.get(id),
    findSupport: () => undefined,
  })
  t.same(result.logTypes, ['End.Log'])
})

t.test('the root rule is the one given, not the stored version of its id', async (t) => {
  const stored = correlation('C.Root', ['S.Old'])
  const edited = correlation('C.Root', ['S.New'])
  const ctx = contextOf([stored, simple('S.Old', ['Old.Log']), simple('S.New', ['New.Log'])])
  t.same(resolveCorrelationLogTypes(edited, ctx).logTypes, ['New.Log'])
})

t.test('check() of a valid rule with resolved references has no problems', async (t) => {
  const data = sequenceData([step('A'), step('B')], [link('A', 'B', 10)])
  const ctx = contextOf([simple('R.A', ['X']), simple('R.B', ['Y'])])
  t.same(correlationEngine.check(ruleFile(data), ctx), { errors: [], warnings: [] })
})
