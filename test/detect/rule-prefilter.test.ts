// The rule prefilter of the rule worker (src/detect/rule-prefilter.ts) is exact: for every record,
// evaluating only `candidates(record)` gives the same answers as evaluating every rule, i.e. every
// rule left out answers "no match". Checked on seeded random rules (Equals / IsIn and the other
// conditions, string vs number vs boolean operands, list values, wildcard KeyPaths, DeepKey and
// Enrichment keys, nested All / Any / None / OnlyOne, InlineFilters, multi-key, comprehensions,
// empty IsIn lists) against seeded random records (missing / null / scalar / list fields), plus
// named cases (keys that describe alike but resolve apart) and a check that it actually prunes.
// Seeded (the seed is printed) so a failure reproduces.
import t, { type Test } from 'tap'
import { RulePrefilter } from '../../src/detect/rule-prefilter.js'
import type { Evaluation } from '../../src/engine/live.js'
import { NO_MATCH, simpleEvaluator } from '../../src/engine/simple/live-evaluator.js'
import { requirementsOf } from '../../src/engine/simple/requirements.js'
import { compileRule } from '../../src/engine/simple/index.js'
import { SeededRandom } from '../helpers/seeded-random.js'

const seed = Number(process.env.SEED ?? Date.now() % 1_000_000)
const rnd = new SeededRandom(seed)
t.comment(`seed ${seed} (SEED=${seed} reproduces)`)

type Data = Record<string, unknown>
type Evaluator = (event: unknown) => Evaluation

/** A small value pool, so that rules and records meet: '1' / 1 / true / 'true' side by side. */
const SCALARS: ReadonlyArray<string | number | boolean> = [
  'a',
  'b',
  'c',
  '1',
  '2',
  'true',
  1,
  2,
  3,
  1.5,
  0,
  true,
  false,
]

/** Key specifiers over the record shape below (the same field reachable several ways). */
const KEYS: ReadonlyArray<Data> = [
  { Key: 'k' },
  { Key: 'n' },
  { Key: 'm' },
  { Key: 'list' },
  { KeyPath: 'k' },
  { KeyPath: 'm' },
  { KeyPath: 'obj.x' },
  { DeepKey: ['obj', 'x'] },
  { KeyPath: 'arr[*].b' },
  { KeyPath: 'arr[0].b' },
  { KeyPath: 'list[*]' },
  { KeyPath: 'list[1]' },
  { DeepKey: ['d', 0] },
  { DeepKey: ['d', '0'] },
  { Enrichment: { Table: 't.u', Selector: 's', FieldPath: 'f' } },
  { Enrichment: { Table: 't', Selector: 'u.s', FieldPath: 'f' } },
]
const FILTER_KEYS = KEYS.filter((k) => 'KeyPath' in k)

const CONDITIONS_WITH_VALUE = [
  'Equals',
  'Equals',
  'Equals',
  'DoesNotEqual',
  'IEquals',
  'Contains',
  'DoesNotContain',
  'StartsWith',
  'IsGreaterThan',
  'IsLessThanOrEquals',
]
const UNARY = ['Exists', 'DoesNotExist', 'IsNull', 'IsNotNull', 'IsNullOrEmpty', 'IsNotNullOrEmpty']

function scalarOperand(condition: string): unknown {
  if (condition === 'StartsWith') return rnd.pick(['a', 'b', '1', 't'])
  if (condition.startsWith('IsGreater') || condition.startsWith('IsLess')) return rnd.pick([0, 1, 2, 1.5])
  return rnd.pick(SCALARS)
}

function leaf(keys: ReadonlyArray<Data>): Data {
  const key = rnd.pick(keys)
  const roll = rnd.int(100)
  if (roll < 35) {
    const n = rnd.int(10) === 0 ? 0 : 1 + rnd.int(4) // sometimes an empty IsIn list
    // Values of one type (validation asks for that); which type varies per list.
    const type = typeof rnd.pick(SCALARS)
    const pool = SCALARS.filter((v) => typeof v === type)
    return {
      ...key,
      Condition: rnd.bool(0.8) ? 'IsIn' : 'IsNotIn',
      Values: Array.from({ length: n }, () => rnd.pick(pool)),
    }
  }
  if (roll < 85) {
    const condition = rnd.pick(CONDITIONS_WITH_VALUE)
    return { ...key, Condition: condition, Value: scalarOperand(condition) }
  }
  return { ...key, Condition: rnd.pick(UNARY) }
}

function expression(depth: number, keys: ReadonlyArray<Data> = KEYS): Data {
  const roll = rnd.int(100)
  if (depth < 3 && roll < 25) {
    // InlineFilters take All and Any only.
    const op = rnd.pick(keys === KEYS ? ['All', 'All', 'Any', 'None', 'OnlyOne'] : ['All', 'Any'])
    return { [op]: Array.from({ length: rnd.int(4) }, () => expression(depth + 1, keys)) }
  }
  if (keys === KEYS && roll < 29)
    return { Condition: rnd.pick(['Equals', 'DoesNotEqual']), Values: [rnd.pick(KEYS), rnd.pick(KEYS)] } // multi-key
  if (keys === KEYS && roll < 33)
    return {
      KeyPath: 'arr',
      Condition: rnd.pick(['AnyElement', 'NoElement']),
      Expressions: [{ Key: 'b', Condition: 'Equals', Value: rnd.pick(SCALARS) }],
    }
  if (keys === KEYS && roll < 35) return { Condition: rnd.pick(['AlwaysTrue', 'AlwaysFalse']) }
  return leaf(keys)
}

function randomRule(id: number): Data {
  const data: Data = {
    RuleID: `r${id}`,
    Severity: 'High',
    Detection: Array.from({ length: 1 + rnd.int(3) }, () => expression(0)),
  }
  if (rnd.bool(0.2)) data.InlineFilters = [expression(1, FILTER_KEYS)]
  return data
}

function randomValue(depth = 0): unknown {
  const roll = rnd.int(100)
  if (roll < 10) return null
  if (roll < 25 && depth < 2) return Array.from({ length: rnd.int(4) }, () => randomValue(depth + 1))
  if (roll < 30 && depth < 2) return { x: randomValue(depth + 1) }
  return rnd.pick(SCALARS)
}

/** A record: every field missing, null, a scalar, a list (of scalars, or nested), or an object. */
function randomRecord(): Data {
  const r: Data = { p_log_type: 'T' }
  const maybe = (name: string, make: () => unknown) => {
    if (rnd.bool(0.75)) r[name] = make()
  }
  maybe('k', () => randomValue())
  maybe('n', () => randomValue())
  maybe('m', () => randomValue())
  maybe('list', () => (rnd.bool(0.8) ? Array.from({ length: rnd.int(4) }, () => randomValue(1)) : randomValue()))
  maybe('obj', () => (rnd.bool(0.8) ? { x: randomValue() } : randomValue()))
  maybe('arr', () =>
    rnd.bool(0.8)
      ? Array.from({ length: rnd.int(4) }, () => (rnd.bool(0.8) ? { b: randomValue() } : randomValue(1)))
      : randomValue(),
  )
  maybe('d', () => (rnd.bool() ? [randomValue(1)] : { '0': randomValue(1) }))
  if (rnd.bool(0.3))
    r.p_enrichment = rnd.bool()
      ? { 't.u': { s: { f: randomValue(1) } } }
      : { t: { 'u.s': { f: randomValue(1) } }, ...(rnd.bool() ? { 't.u': { s: { f: randomValue(1) } } } : {}) }
  // JSON-shaped, as the rule worker sees it (it parses stored lines).
  return JSON.parse(JSON.stringify(r)) as Data
}

/** The rules compiled, their evaluators and a prefilter over them (invalid rules: a null tree). */
function build(rules: Data[]): { evaluators: Array<Evaluator | null>; prefilter: RulePrefilter } {
  const evaluators = rules.map((d) => {
    const e = simpleEvaluator(d)
    return typeof e === 'function' ? e : null
  })
  const trees = rules.map((d) => compileRule(d).rule?.tree ?? null)
  return { evaluators, prefilter: new RulePrefilter(trees.map((tree) => (tree ? requirementsOf(tree) : null))) }
}

/** Checks one record; returns the number of mismatches (each reported once per rule). */
function check(
  tt: Test,
  rules: Data[],
  evaluators: Array<Evaluator | null>,
  prefilter: RulePrefilter,
  record: Data,
  reported: Set<number>,
): { candidates: number; matched: number; failures: number } {
  const candidates = prefilter.candidates(record)
  let failures = 0
  for (let i = 1; i < candidates.length; i++)
    if (!(candidates[i - 1]! < candidates[i]!)) {
      failures++
      tt.fail(`candidates are not ascending and distinct: ${JSON.stringify(candidates)}`)
      break
    }
  const inCandidates = new Set(candidates)
  let matched = 0
  for (const [i, evaluate] of evaluators.entries()) {
    if (evaluate === null) continue
    const out = evaluate(record)
    if (out !== NO_MATCH) matched++
    if (out !== NO_MATCH && !inCandidates.has(i)) {
      failures++
      if (!reported.has(i)) {
        reported.add(i)
        tt.fail(`rule ${i} is left out but answers ${JSON.stringify(out)}`, { rule: rules[i], record })
      }
    }
  }
  const evaluated = candidates.filter((i) => evaluators[i] !== null).length
  return { candidates: evaluated, matched, failures }
}

t.test('random rules × random records: the rules left out answer no match', async (t) => {
  for (let round = 0; round < 4; round++) {
    const rules = Array.from({ length: 150 }, (_, i) => randomRule(i))
    const { evaluators, prefilter } = build(rules)
    const valid = evaluators.filter((e) => e !== null).length
    // The generator must mostly produce valid rules, or the test checks little.
    t.ok(valid >= rules.length * 0.9, `round ${round}: ${valid} of ${rules.length} rules compile`)
    t.ok(prefilter.indexed > rules.length / 4, `round ${round}: ${prefilter.indexed} rules filed under a key`)
    const reported = new Set<number>()
    let failures = 0
    let matched = 0
    let candidates = 0
    const records = 3000
    for (let r = 0; r < records; r++) {
      const out = check(t, rules, evaluators, prefilter, randomRecord(), reported)
      failures += out.failures
      matched += out.matched
      candidates += out.candidates
    }
    t.equal(failures, 0, `round ${round}: no rule left out answers anything but no match`)
    // The pool is small on purpose: matches happen (else equality would be trivially true) and
    // fewer rules are evaluated than exist.
    t.ok(matched > records, `round ${round}: ${matched} matches over ${records} records`)
    t.ok(candidates < records * valid, `round ${round}: ${candidates} evaluations instead of ${records * valid}`)
  }
})

t.test('named cases', async (t) => {
  const cases: Array<[string, Data[], Data, number[]]> = [
    [
      "'1' and 1 are different operands; a list value meets the IsIn rule of an element",
      [
        { Detection: [{ Key: 'k', Condition: 'Equals', Value: '1' }] },
        { Detection: [{ Key: 'k', Condition: 'Equals', Value: 1 }] },
        { Detection: [{ Key: 'k', Condition: 'IsIn', Values: [true, false] }] },
      ],
      { k: [3, true] },
      [2],
    ],
    [
      'DeepKey [d, 0] and [d, "0"] describe alike but resolve apart (index vs field)',
      [
        { Detection: [{ DeepKey: ['d', 0], Condition: 'Equals', Value: 'x' }] },
        { Detection: [{ DeepKey: ['d', '0'], Condition: 'Equals', Value: 'y' }] },
      ],
      { d: { '0': 'y' } },
      [1],
    ],
    [
      'Enrichment tables and selectors holding dots describe alike but resolve apart',
      [
        {
          Detection: [{ Enrichment: { Table: 't.u', Selector: 's', FieldPath: 'f' }, Condition: 'Equals', Value: 'z' }],
        },
        {
          Detection: [{ Enrichment: { Table: 't', Selector: 'u.s', FieldPath: 'f' }, Condition: 'Equals', Value: 'w' }],
        },
      ],
      { p_enrichment: { t: { 'u.s': { f: 'w' } } } },
      [1],
    ],
    [
      'an Equals inside Any is not required: that rule is evaluated',
      [
        { Detection: [{ Key: 'k', Condition: 'Equals', Value: 'a' }] },
        {
          Detection: [
            {
              Any: [
                { Key: 'k', Condition: 'Equals', Value: 'b' },
                { Key: 'm', Condition: 'Equals', Value: 1 },
              ],
            },
          ],
        },
      ],
      { k: 'zzz', m: 1 },
      [1],
    ],
    [
      'an Equals inside None or a negated condition never files a rule',
      [
        { Detection: [{ None: [{ Key: 'k', Condition: 'Equals', Value: 'a' }] }] },
        { Detection: [{ Key: 'k', Condition: 'DoesNotEqual', Value: 'a' }] },
        { Detection: [{ Key: 'k', Condition: 'IsNotIn', Values: ['a'] }] },
        { Detection: [{ Key: 'k', Condition: 'Equals', Value: 'a' }] },
      ],
      { k: 'b' },
      [0, 1, 2],
    ],
    [
      'All inside All is required: filed, and still met by its value',
      [{ Detection: [{ All: [{ All: [{ Key: 'k', Condition: 'Equals', Value: 'a' }] }] }] }],
      { k: 'a' },
      [0],
    ],
    [
      'an empty IsIn list never matches; a missing or null field meets no filed rule',
      [
        { Detection: [{ Key: 'k', Condition: 'IsIn', Values: [] }] },
        { Detection: [{ Key: 'm', Condition: 'IsNull' }] },
      ],
      { k: null },
      [1],
    ],
    [
      'a wildcard KeyPath: an element equal to the operand matches IsIn',
      [
        { Detection: [{ KeyPath: 'arr[*].b', Condition: 'IsIn', Values: ['x'] }] },
        { Detection: [{ KeyPath: 'arr[*].b', Condition: 'Equals', Value: 'x' }] },
      ],
      { arr: [{ b: 'y' }, { b: 'x' }] },
      [0],
    ],
    [
      'InlineFilters on a missing field pass: the filed Detection decides',
      [
        {
          Detection: [{ Key: 'k', Condition: 'Equals', Value: 'a' }],
          InlineFilters: [{ KeyPath: 'missing', Condition: 'Equals', Value: 'never' }],
        },
      ],
      { k: 'a' },
      [0],
    ],
  ]
  for (const [name, partial, record, expected] of cases) {
    const rules = partial.map((d, i) => ({ RuleID: `r${i}`, Severity: 'High', ...d }))
    const { evaluators, prefilter } = build(rules)
    t.ok(
      evaluators.every((e) => e !== null),
      `${name}: the rules compile`,
    )
    const matched = evaluators.flatMap((e, i) => (e !== null && e(record) !== NO_MATCH ? [i] : []))
    t.same(matched, expected, `${name}: evaluating all rules matches ${JSON.stringify(expected)}`)
    const candidates = prefilter.candidates(record)
    t.same(
      matched.filter((i) => candidates.includes(i)),
      expected,
      `${name}: every matching rule is a candidate (${JSON.stringify(candidates)})`,
    )
  }
})

t.test('it prunes: 100 rules of the benchmark shape meet a typical record as one or two', async (t) => {
  // The shape of bench/detect-ingest: each rule an Equals on the record kind plus a second condition.
  const kinds = Array.from({ length: 100 }, (_, i) => `kind_${i}`)
  const rules = kinds.map((kind, i) => ({
    RuleID: `r${i}`,
    Severity: 'High',
    Detection: [
      { Key: 'kind', Condition: 'Equals', Value: kind },
      { KeyPath: 'metadata.context.user', Condition: 'IsIn', Values: ['alice', 'bob'] },
    ],
  }))
  const { evaluators, prefilter } = build(rules)
  t.equal(prefilter.indexed, 100, 'every rule is filed under a key')
  for (const kind of ['kind_0', 'kind_42', 'kind_99', 'other']) {
    const record = { kind, metadata: { context: { user: 'alice' } } }
    const candidates = prefilter.candidates(record)
    t.ok(candidates.length <= 2, `${kind}: ${candidates.length} candidates`)
    const matched = evaluators.flatMap((e, i) => (e!(record) !== NO_MATCH ? [i] : []))
    t.same(matched, kind === 'other' ? [] : [kinds.indexOf(kind)], `${kind}: the one matching rule`)
    t.ok(
      matched.every((i) => candidates.includes(i)),
      `${kind}: it is among the candidates`,
    )
  }
})
