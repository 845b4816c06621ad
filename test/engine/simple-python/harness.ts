// Differential testing of the transpiler: each rule is compiled by the TypeScript evaluator and
// transpiled to Python, its events are run through the real Python runner in one job per rule,
// and every (rule, event) pair must agree on match / no match and on the alert fields the module
// defines (title, dedup, alert_context, severity). Python functions must never raise.
import type { EngineContext } from '../../../src/engine/engine.js'
import type { PythonTestOutcome } from '../../../src/engine/python/index.js'
import { compileRule } from '../../../src/engine/simple/index.js'
import { transpileSimpleRule } from '../../../src/engine/simple-python/index.js'

const NO_NEIGHBOURS: EngineContext = { findRule: () => undefined, findSupport: () => undefined }

export type RunModule = (
  module: { source: string; severity?: string },
  tests: unknown[],
  ctx: EngineContext,
) => Promise<PythonTestOutcome[]>

export interface Case {
  name: string
  data: Record<string, unknown>
  events: unknown[]
}

export interface Disagreement {
  rule: string
  data: Record<string, unknown>
  event: unknown
  field: string
  ts: unknown
  py: unknown
  error?: string | null
}

export interface DiffResult {
  rules: number
  pairs: number
  matched: number
  disagreements: Disagreement[]
  /** Per rule: how many events it ran on and how many matched (to prove both outcomes occur). */
  perRule: Array<{ name: string; pairs: number; matched: number }>
}

/** JSON with sorted keys: the Python side's dicts and JavaScript's objects order keys differently. */
function canon(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canon(o[k])}`)
      .join(',')}}`
  }
  return JSON.stringify(v) ?? 'undefined'
}

const BATCH = 200

async function runCase(c: Case, run: RunModule): Promise<DiffResult> {
  const compiled = compileRule(c.data)
  const rule = compiled.rule
  if (rule === null) throw new Error(`${c.name} does not compile: ${JSON.stringify(compiled.errors.slice(0, 3))}`)
  const source = transpileSimpleRule(c.data)
  if (source === undefined) throw new Error(`${c.name}: no Python for a rule that compiles`)
  const tree = rule.tree
  const result: DiffResult = { rules: 1, pairs: 0, matched: 0, disagreements: [], perRule: [] }
  for (let start = 0; start < c.events.length; start += BATCH) {
    const events = c.events.slice(start, start + BATCH)
    const expected = events.map((e) => rule.matches(e))
    const tests = events.map((Log, i) => ({ Name: `event ${start + i}`, ExpectedResult: expected[i], Log }))
    const outcomes = await run({ source, severity: tree.severity ?? undefined }, tests, NO_NEIGHBOURS)
    events.forEach((event, i) => {
      const o = outcomes[i]!
      const fns = o.functions ?? {}
      const bad = (field: string, ts: unknown, py: unknown, error?: string | null) =>
        result.disagreements.push({ rule: c.name, data: c.data, event, field, ts, py, error })
      result.pairs++
      if (expected[i]) result.matched++
      if (o.actual !== expected[i]) bad('rule', expected[i], o.actual, o.error)
      for (const [name, f] of Object.entries(fns)) if (f.error !== null) bad(`${name} raised`, null, null, f.error)
      if (tree.alertTitle) check('title', rule.title(event), fns.title?.output)
      if (tree.groupBy) check('dedup', rule.dedup(event).slice(0, 1000), fns.dedup?.output)
      if (tree.alertContext) check('alertContext', rule.alertContext(event), fns.alertContext?.output)
      if (tree.dynamicSeverities) check('severity', rule.severity(event), fns.severity?.output)
      function check(field: string, ts: unknown, py: unknown) {
        if (canon(ts) !== canon(py)) bad(field, ts, py)
      }
    })
  }
  result.perRule.push({ name: c.name, pairs: result.pairs, matched: result.matched })
  return result
}

/** Runs every case (the pool queues the jobs) and sums the results. */
export async function differential(cases: readonly Case[], run: RunModule): Promise<DiffResult> {
  const results = await Promise.all(cases.map((c) => runCase(c, run)))
  const total: DiffResult = { rules: 0, pairs: 0, matched: 0, disagreements: [], perRule: [] }
  for (const r of results) {
    total.rules += r.rules
    total.pairs += r.pairs
    total.matched += r.matched
    total.disagreements.push(...r.disagreements)
    total.perRule.push(...r.perRule)
  }
  return total
}

/** A short report of the first disagreements, for the assertion message. */
export function describe(d: readonly Disagreement[], max = 5): string {
  return d
    .slice(0, max)
    .map(
      (x) =>
        `${x.rule} ${x.field}: ts=${canon(x.ts)} py=${canon(x.py)} ${x.error ?? ''}\n  rule=${canon({ Detection: x.data.Detection, InlineFilters: x.data.InlineFilters })}\n  event=${canon(x.event)}`,
    )
    .join('\n')
}
