// Differential test (b): seeded random rules and events (generator.ts) through the generated Python
// and the TypeScript evaluator. Part one: whole rules (nested shapes, filters, alert fields) × 100
// events each; part two: one leaf per rule for every condition spelling, so each condition is seen
// both holding and failing. Coverage of conditions, key forms and shapes is asserted, not assumed.
import t from 'tap'
import { createPythonEngine } from '../../../src/engine/python/index.js'
import {
  ACCEPTED_CONDITION_NAMES,
  canonicalCondition,
  compileRule,
  CONDITION_NAMES,
  CONDITIONS,
  positiveOf,
} from '../../../src/engine/simple/index.js'
import { mulberry32 as rng } from '../../helpers/seeded-random.js'
import { event, KEY_FORMS, leaf, newCoverage, ruleData, type Coverage } from './generator.js'
import { describe, differential, type Case } from './harness.js'

const SEED = Number(process.env.RK_DIFF_SEED ?? 20261121)
const RULES = Number(process.env.RK_DIFF_RULES ?? 80)
const EVENTS_PER_RULE = 100

const { pool, runModuleTests } = createPythonEngine({ command: 'python3', poolSize: 2, timeoutMs: 10_000 })
t.teardown(() => pool.close())

function compiles(data: Record<string, unknown>): boolean {
  return compileRule(data).rule !== null
}

function wholeRules(r: () => number, cov: Coverage): Case[] {
  const firsts = ACCEPTED_CONDITION_NAMES.filter((n) =>
    ['value', 'values', 'none'].includes(CONDITIONS[canonicalCondition(n)!].operand),
  )
  const cases: Case[] = []
  for (let i = 0; cases.length < RULES; i++) {
    const data = ruleData(r, cov, `Gen.Rule.${i}`, firsts[cases.length % firsts.length])
    // The first rules carry one empty combinator each, so every empty form is in every run.
    const empty = ['All', 'Any', 'OnlyOne', 'None'][i]
    if (empty !== undefined) {
      ;(data.Detection as unknown[]).push({ Any: [{ [empty]: [] }, { Key: 'a', Condition: 'Exists' }] })
      cov.shapes.add(`${empty} empty`)
    }
    if (!compiles(data))
      throw new Error(`generated rule ${i} does not compile: ${JSON.stringify(compileRule(data).errors.slice(0, 2))}`)
    cases.push({ name: `rule ${i}`, data, events: Array.from({ length: EVENTS_PER_RULE }, () => event(r)) })
  }
  return cases
}

t.test(`${RULES} generated rules × ${EVENTS_PER_RULE} events (seed ${SEED})`, async (t) => {
  const r = rng(SEED)
  const cov = newCoverage()
  const cases = wholeRules(r, cov)
  const res = await differential(cases, runModuleTests)
  t.ok(res.pairs >= RULES * EVENTS_PER_RULE, `${res.pairs} (detection, event) pairs`)
  t.ok(
    res.matched >= res.pairs * 0.05 && res.matched <= res.pairs * 0.95,
    `both outcomes are common (${res.matched} matches)`,
  )
  t.equal(res.disagreements.length, 0, describe(res.disagreements))
  for (const name of ACCEPTED_CONDITION_NAMES) t.ok(cov.conditions.has(name), `condition ${name} generated`)
  for (const form of [...KEY_FORMS, 'element']) t.ok(cov.keyForms.has(form), `key form ${form} generated`)
  const shapes = [
    'leaf',
    'filter leaf',
    'multi-key',
    'absolute',
    'All',
    'Any',
    'OnlyOne',
    'None',
    'All empty',
    'Any empty',
    'OnlyOne empty',
    'None empty',
    'comprehension AnyElement',
    'comprehension AllElements',
    'comprehension OnlyOneElement',
    'comprehension NoElement',
    'filter All',
    'filter Any',
    'title',
    'context',
    'dedup',
    'severity',
  ]
  for (const s of shapes) t.ok(cov.shapes.has(s), `shape ${s} generated`)
})

t.test('one leaf per rule: every condition spelling × several key forms, each seen holding and failing', async (t) => {
  const r = rng(SEED + 1)
  const cov = newCoverage()
  const value = ACCEPTED_CONDITION_NAMES.filter((n) =>
    ['value', 'values', 'none'].includes(CONDITIONS[canonicalCondition(n)!].operand),
  )
  const cases: Case[] = []
  // A negated spelling gets the very leaf its positive form got, so it fails where that one holds.
  for (const condition of value.filter((n) => positiveOf(canonicalCondition(n)!) === undefined)) {
    const negation = CONDITION_NAMES.find((n) => positiveOf(n) === canonicalCondition(condition))
    // Two detection leaves and two filter leaves, one of each on a field that often matches.
    for (let k = 0; k < 4; k++) {
      const filter = k >= 2
      const expr = leaf(r, cov, { inElement: false, filter, condition, hot: k % 2 === 0 })
      const events: unknown[] = Array.from({ length: 40 }, () => event(r))
      // Plus events that hand the operand back (as is, upper-cased, in a list), so the positive
      // form holds and the negated one fails at least sometimes.
      const path = typeof expr.KeyPath === 'string' ? /^([a-z]+)$/.exec(expr.KeyPath) : null
      const given = 'Value' in expr ? expr.Value : Array.isArray(expr.Values) ? expr.Values[0] : undefined
      // A CIDR operand is echoed as its address, which lies in the network.
      const operand =
        CONDITIONS[canonicalCondition(condition)!].operandType === 'cidr' ? String(given).split('/')[0] : given
      if (path !== null && operand !== undefined) {
        const at = (v: unknown) => ({ [path[1]!]: v })
        events.push(at(operand), at(typeof operand === 'string' ? operand.toUpperCase() : operand), at([operand]))
      }
      for (const name of negation === undefined ? [condition] : [condition, negation]) {
        const e = { ...expr, Condition: name }
        const data = filter
          ? { RuleID: 'Gen.Leaf', Severity: 'LOW', Detection: [{ Condition: 'AlwaysTrue' }], InlineFilters: [e] }
          : { RuleID: 'Gen.Leaf', Severity: 'LOW', Detection: [e] }
        cases.push({ name: `${name} ${filter ? 'filter' : 'detection'} ${k}`, data, events })
      }
    }
  }
  const res = await differential(cases, runModuleTests)
  t.ok(res.pairs >= 3000, `${res.pairs} (detection, event) pairs over ${res.rules} rules`)
  t.equal(res.disagreements.length, 0, describe(res.disagreements))
  // Each spelling, over its detection and filter rules, must have been seen both holding and failing.
  for (const condition of value) {
    const rows = res.perRule.filter((p) => p.name.startsWith(`${condition} `))
    const matched = rows.reduce((n, p) => n + p.matched, 0)
    const pairs = rows.reduce((n, p) => n + p.pairs, 0)
    t.ok(matched > 0 && matched < pairs, `${condition}: ${matched} of ${pairs} events matched`)
  }
})
