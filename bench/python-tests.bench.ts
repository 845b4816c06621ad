// Python unit tests on save: a scheduled rule with 10 tests (the example rule, its global helper and
// its mock) run through the engine on a warm pool. Baseline in the same run: one round trip of an
// empty message to a warm worker (the transport floor). Target: ≤ 50 ms total per rule with a warm
// pool. The cold start (interpreter probe, worker spawn, first run) is reported separately.
import { performance } from 'node:perf_hooks'
import { parse } from 'yaml'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { EngineContext } from '../src/engine/engine.js'
import { createPythonEngine } from '../src/engine/python/index.js'
import type { RuleFile, SupportFile } from '../src/rules/model.js'
import { percentile, type BenchContext, type BenchModule, type BenchResult } from './lib.js'

const TARGET_MS = 50
const EXAMPLES = [fileURLToPath(new URL('../test/fixtures/shared-examples-rules/', import.meta.url))]

function example(rel: string): string {
  for (const root of EXAMPLES) {
    try {
      return readFileSync(root + rel, 'utf8')
    } catch {
      // next root
    }
  }
  throw new Error(`example ${rel} not found`)
}

/** The example rule with its four tests extended to ten (more grant counts, roles and the mock). */
function tenTestRule(): RuleFile {
  const data = parse(example('scheduled_rules/editor_admin_grants.yml')) as Record<string, unknown>
  const base = data.Tests as Array<Record<string, unknown>>
  const tests = Array.from({ length: 10 }, (_, i) => {
    const t = base[i % base.length]!
    return { ...t, Name: `${String(t.Name)} #${i + 1}` }
  })
  return {
    kind: 'scheduled',
    id: String(data.RuleID),
    path: 'scheduled_rules/editor_admin_grants.yml',
    data: { ...data, Tests: tests },
    pythonSource: example('scheduled_rules/editor_admin_grants.py'),
    pythonPath: 'scheduled_rules/editor_admin_grants.py',
  }
}

function context(): EngineContext {
  const helper: SupportFile = {
    analysisType: 'global',
    path: 'global_helpers/editor_helpers.yml',
    data: parse(example('global_helpers/editor_helpers.yml')) as Record<string, unknown>,
    pythonSource: example('global_helpers/editor_helpers.py'),
  }
  return { findRule: () => undefined, findSupport: (id) => (id === 'editor_helpers' ? helper : undefined) }
}

const bench: BenchModule = async (ctx: BenchContext) => {
  const iterations = Math.max(5, Math.round(100 * ctx.scale))
  const rule = tenTestRule()
  const engineCtx = context()
  const { engine, pool } = createPythonEngine({ command: 'python3', poolSize: 2, timeoutMs: 5000 })
  try {
    ctx.progress('python: cold start')
    const coldStart = performance.now()
    const first = await engine.runTests(rule, engineCtx)
    const coldMs = performance.now() - coldStart
    if (first.length !== 10 || !first.every((o) => o.passed === true)) {
      throw new Error(`the 10-test rule did not pass: ${JSON.stringify(first.filter((o) => !o.passed))}`)
    }
    const info = await pool.describe()

    ctx.progress(`python: ${iterations} warm runs of 10 tests`)
    for (let i = 0; i < 3; i++) await engine.runTests(rule, engineCtx) // both workers warm, spares forked
    const runs: number[] = []
    const pings: number[] = []
    for (let i = 0; i < iterations; i++) {
      await pool.ping() // lands while a worker may still fork its next spare; the next one does not
      let start = performance.now()
      await pool.ping()
      pings.push(performance.now() - start)
      start = performance.now()
      const outcomes = await engine.runTests(rule, engineCtx)
      runs.push(performance.now() - start)
      if (!outcomes.every((o) => o.passed === true)) throw new Error('a warm run failed')
    }
    const median = percentile(runs, 50)
    const p95 = percentile(runs, 95)
    const ping = percentile(pings, 50)
    const results: BenchResult[] = [
      {
        name: 'Python unit tests on save (scheduled rule, 10 tests, warm pool)',
        target: `≤ ${TARGET_MS} ms total with a warm worker pool`,
        value: Number(median.toFixed(2)),
        unit: 'ms (median)',
        baseline: { name: 'round trip of an empty message to a warm worker', value: Number(ping.toFixed(3)), unit: 'ms (median)' },
        ratio: Number((median / ping).toFixed(1)),
        pass: median <= TARGET_MS,
        notes: `p95 ${p95.toFixed(2)} ms over ${iterations} runs; Python ${info.interpreter.version}; one forked, confined child per rule run; isolation ${JSON.stringify(info.isolation)}`,
      },
      {
        name: 'Python worker pool cold start (probe, spawn, first 10-test run)',
        target: 'reported (no target)',
        value: Number(coldMs.toFixed(1)),
        unit: 'ms',
        pass: true,
        notes: 'paid once per server start, on the first Python test run',
      },
    ]
    return results
  } finally {
    await pool.close()
  }
}

export default bench
