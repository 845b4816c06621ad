// The quarantine holds a rule at a revision of its file, compared by contents: the same file loaded
// again (a replay's index of another commit builds new objects) stays held and does not lift it; a
// file with other contents is evaluated; /status drops an entry whose served file changed or is gone.
import t from 'tap'
import type { RuleFile } from '../../../src/rules/model.js'
import { Quarantine } from '../../../src/engine/python/quarantine.js'

const file = (source: string): RuleFile => ({
  kind: 'python',
  id: 'Py.Slow',
  path: 'rules/slow.yml',
  data: { AnalysisType: 'rule', RuleID: 'Py.Slow', Filename: 'slow.py', LogTypes: ['Editor.Audit'] },
  pythonSource: source,
  pythonPath: 'rules/slow.py',
})

t.test('a replay’s copy of the same revision stays quarantined and does not lift the live one', async (t) => {
  const q = new Quarantine(2)
  const live = file('def rule(event):\n    return True\n')
  q.strike(live, 'budget', 'slow')
  t.equal(q.of(live), undefined, 'one strike of two: still evaluated')
  t.ok(q.strike(live, 'budget', 'slow'), 'the second strike quarantines it')
  const replayed = file('def rule(event):\n    return True\n')
  t.not(replayed, live)
  t.match(q.of(replayed), { ruleId: 'Py.Slow' }, 'the same contents, another object: held')
  const older = file('def rule(event):\n    return False\n')
  t.equal(q.of(older), undefined, 'another revision of the rule (a replay of an older commit) is evaluated')
  t.match(q.of(live), { ruleId: 'Py.Slow' }, 'and evaluating it did not lift the live quarantine')
  t.same(
    q.list(() => replayed).map((e) => e.ruleId),
    ['Py.Slow'],
    '/status against a served file of the same contents still lists it',
  )
  t.same(
    q.list(() => older),
    [],
    'a served file with other contents lifts it',
  )
  t.equal(q.of(live), undefined)
})

t.test('a rule no longer served leaves the list', async (t) => {
  const q = new Quarantine(1)
  q.strike(file('x = 1\n'), 'crashed', 'boom')
  t.equal(q.list().length, 1)
  t.same(
    q.list(() => undefined),
    [],
  )
})
