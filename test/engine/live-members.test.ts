// The `live` member of the rule-engine interface (src/engine/live.ts): the engines of a build say
// which kinds detection runs on records and how (simple rules in-process, offloadable to the rule
// worker, with the conditions their matches meet; Python streaming rules in batches), and the kind
// definitions say which kinds run on a schedule over signals (correlation) instead.
import t from 'tap'
import { closeEngines, createEngineRegistry, DEFAULT_PYTHON } from '../../src/engine/registry.js'
import { simpleLive } from '../../src/engine/simple/live.js'
import { RULE_KINDS, runsOnSignals } from '../../src/rules/kinds/index.js'
import type { IndexedRule } from '../../src/rules/rule-index.js'

const ruleOf = (data: Record<string, unknown>) =>
  ({ id: 'T.R', kind: 'simple', file: { data } }) as unknown as IndexedRule

t.test('the engines of a build bring their live evaluators; the others have none', async (t) => {
  const engines = createEngineRegistry({ python: DEFAULT_PYTHON })
  t.teardown(() => closeEngines(engines))
  const live = RULE_KINDS.filter((k) => typeof engines[k]?.live === 'function')
  t.same(live.sort(), ['python', 'simple'])
  t.same(
    RULE_KINDS.filter((k) => runsOnSignals(k)),
    ['correlation'],
    'correlation rules run on their schedule over signals',
  )
})

t.test('a simple rule compiles in-process, offloadable, with what its matches require', async (t) => {
  const data = {
    RuleID: 'T.R',
    Severity: 'HIGH',
    Detection: [
      { KeyPath: 'team_id', Condition: 'IsIn', Values: ['a', 'b'] },
      { KeyPath: 'user', Condition: 'Exists' },
    ],
  }
  const compiled = simpleLive(ruleOf(data), {} as never)
  if (!('evaluate' in compiled)) throw new Error(JSON.stringify(compiled))
  t.match(compiled.offload, { module: /engine\/simple\/live\.(ts|js)$/, data })
  t.equal(compiled.offload!.data, data, 'the worker builds it from the rule file data itself')
  t.match(compiled.evaluate({ team_id: 'a', user: 'u' }), { matched: true, severity: 'HIGH' })
  t.same(compiled.evaluate({ team_id: 'c', user: 'u' }), { matched: false })
  t.equal(compiled.requires?.length, 1, 'the IsIn files it; Exists does not')
  t.same(compiled.requires![0]!.values, ['a', 'b'])
  t.equal(compiled.requires![0]!.resolver()({ team_id: 'b' }), 'b')
  t.match(simpleLive(ruleOf({ RuleID: 'T.R', Severity: 'HIGH', Detection: 'x' }), {} as never), {
    error: /the rule is invalid/,
  })
})
