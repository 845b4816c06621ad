// Differential test (a): every simple-rule test of the example rules (the shared examples and the
// repository template) and every case of the simple engine's own test tables, run through the
// generated Python and the TypeScript evaluator: they agree on match / no match and alert fields.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { parseDocument } from 'yaml'
import { createPythonEngine } from '../../../src/engine/python/index.js'
import { alertFieldCases, conditionCases, keySpecCases, shapeCases } from './engine-tables.js'
import { describe, differential, type Case } from './harness.js'

const { pool, runModuleTests } = createPythonEngine({ command: 'python3', poolSize: 2, timeoutMs: 10_000 })
t.teardown(() => pool.close())

const ROOTS = [
  fileURLToPath(new URL('../../../examples/rules/simple_rules', import.meta.url)),
  fileURLToPath(new URL('../../../rules-repo-template/simple_rules', import.meta.url)),
]

function yamlFiles(dir: string): string[] {
  let out: string[] = []
  let names: string[]
  try {
    names = readdirSync(dir).sort()
  } catch {
    return out
  }
  for (const n of names) {
    const p = join(dir, n)
    if (statSync(p).isDirectory()) out = out.concat(yamlFiles(p))
    else if (/\.ya?ml$/.test(n)) out.push(p)
  }
  return out
}

function exampleCases(): Case[] {
  return ROOTS.flatMap(yamlFiles).map((file) => {
    const data = parseDocument(readFileSync(file, 'utf8'), { version: '1.2', schema: 'core' }).toJS() as Record<
      string,
      unknown
    >
    const tests = (Array.isArray(data.Tests) ? data.Tests : []) as Array<Record<string, unknown>>
    return { name: file, data, events: tests.map((x) => x.Log) }
  })
}

t.test('every test of every example simple rule: Python and TypeScript agree', async (t) => {
  const cases = exampleCases()
  const tests = cases.reduce((n, c) => n + c.events.length, 0)
  t.ok(cases.length >= 6, `${cases.length} example rules`)
  t.ok(tests >= 15, `${tests} example tests`)
  const r = await differential(cases, runModuleTests)
  t.equal(r.pairs, tests)
  t.ok(r.matched > 0 && r.matched < r.pairs, `both outcomes occur (${r.matched} matches)`)
  t.equal(r.disagreements.length, 0, describe(r.disagreements))
})

t.test(
  'the simple engine’s condition table (every condition and its negation, as a leaf and as a filter)',
  async (t) => {
    const r = await differential(conditionCases(), runModuleTests)
    t.ok(r.pairs > 600, `${r.pairs} pairs over ${r.rules} rules`)
    t.equal(r.disagreements.length, 0, describe(r.disagreements))
  },
)

t.test('the simple engine’s shapes and key-specifier tables', async (t) => {
  const r = await differential([...shapeCases(), ...keySpecCases()], runModuleTests)
  t.ok(r.pairs > 200, `${r.pairs} pairs over ${r.rules} rules`)
  t.equal(r.disagreements.length, 0, describe(r.disagreements, 10))
})

t.test('the simple engine’s alert-field table (titles, the 1,000 cut, context, severities, dedup)', async (t) => {
  const r = await differential(alertFieldCases(), runModuleTests)
  t.ok(r.pairs > 150, `${r.pairs} pairs over ${r.rules} rules`)
  t.equal(r.disagreements.length, 0, describe(r.disagreements, 10))
})
