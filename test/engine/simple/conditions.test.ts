// Every condition × (a value of the right type, of a wrong type, null, missing, a list value),
// table-driven. Each negated condition is checked to be the exact negation of its positive form on
// every one of those cases, so it is true on a missing value.
import t from 'tap'
import { CONDITIONS, CONDITION_NAMES, type ConditionName } from '../../../src/engine/simple/index.js'
import { holds } from './helpers.js'
import { MISSING, NEGATION_OF, ROWS } from './condition-table.js'

function eventFor(value: unknown): Record<string, unknown> {
  return value === MISSING ? { other: 1 } : { f: value }
}

function label(v: unknown): string {
  return v === MISSING ? 'missing' : JSON.stringify(v)
}

for (const row of ROWS) {
  const opText = row.operand === undefined ? '' : ` ${JSON.stringify(row.operand)}`
  const cases: Array<[string, unknown, boolean]> = [
    ...row.right.map(([v, e]): [string, unknown, boolean] => ['right type', v, e]),
    ...row.wrong.map((v): [string, unknown, boolean] => ['wrong type', v, false]),
    ['null', null, row.null],
    ['missing', MISSING, row.missing],
    ...row.list.map(([v, e]): [string, unknown, boolean] => ['list value', v, e]),
  ]
  t.test(`${row.condition}${opText}`, async (t) => {
    for (const [kind, value, expected] of cases) {
      const expr = { Key: 'f', Condition: row.condition, ...row.operand }
      t.equal(holds(expr, eventFor(value)), expected, `${kind} ${label(value)} → ${expected}`)
    }
  })
  const canonical = row.condition.replace(/OrEqual(To)?$/, 'OrEquals')
  const negated = NEGATION_OF.get(canonical)
  if (negated === undefined) continue
  t.test(`${negated}${opText} is the exact negation of ${row.condition}`, async (t) => {
    for (const [kind, value, expected] of cases) {
      const expr = { Key: 'f', Condition: negated, ...row.operand }
      t.equal(holds(expr, eventFor(value)), !expected, `${kind} ${label(value)} → ${!expected}`)
    }
  })
}

t.test('every condition with a value test has a row here, and each negation is covered', async (t) => {
  const covered = new Set(ROWS.map((r) => r.condition.replace(/OrEqual(To)?$/, 'OrEquals')))
  for (const name of CONDITION_NAMES) {
    const info = CONDITIONS[name as ConditionName]
    if (info.operand === 'expressions' || info.operand === 'constant') continue
    const positive = info.negates ?? name
    t.ok(covered.has(positive), `${name} is covered`)
  }
})

t.test('AlwaysTrue and AlwaysFalse ignore the event', async (t) => {
  for (const ev of [{}, { f: 1 }, null, 'text', []]) {
    t.equal(holds({ Condition: 'AlwaysTrue' }, ev), true)
    t.equal(holds({ Condition: 'AlwaysFalse' }, ev), false)
  }
})

t.test('a Value given to a unary condition is ignored', async (t) => {
  t.equal(holds({ Key: 'f', Condition: 'Exists', Value: 'ignored' }, { f: 'x' }), true)
  t.equal(holds({ Key: 'f', Condition: 'IsNull', Values: ['x'] }, { f: 'x' }), false)
})

t.test('string conditions are case-sensitive, I-forms fold both sides', async (t) => {
  t.equal(holds({ Key: 'f', Condition: 'Equals', Value: 'ABC' }, { f: 'abc' }), false)
  t.equal(holds({ Key: 'f', Condition: 'IEquals', Value: 'ABC' }, { f: 'abc' }), true)
  t.equal(holds({ Key: 'f', Condition: 'IDoesNotEqual', Value: 'ABC' }, { f: 'abc' }), false)
  t.equal(holds({ Key: 'f', Condition: 'IDoesNotContain', Value: 'B' }, { f: 'abc' }), false)
})
