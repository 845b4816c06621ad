// Prometheus metrics (prom-client). One registry per server instance so that tests can run several
// servers in one process; modules get the registry and register their own metrics on it. Here too:
// the catalog's gauges (rules served, invalid files, read at scrape time), the unit-test outcomes
// of every engine (a wrapper), and the Python pool's series. docs/operations.md lists them all.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import type { EngineRegistry, RuleEngine, TestOutcome } from './engine/engine.js'

export { Registry, Counter, Histogram }

export function createMetricsRegistry(withDefaults = true): Registry {
  const registry = new Registry()
  if (withDefaults) collectDefaultMetrics({ register: registry, prefix: 'rulekeeper_' })
  return registry
}

/** What the catalog gauges read: the published index (rules/rule-index.ts). */
interface ServedIndex {
  readonly sorted: Readonly<Record<string, readonly string[]>>
  invalidFiles(): readonly unknown[]
}

/**
 * `rulekeeper_rules{kind}` and `rulekeeper_invalid_files`, read from the published index when
 * scraped (so they are right at start, after every write and every reconcile); the invalid-file
 * count is computed once per published index.
 */
export function registerCatalogMetrics(registry: Registry, index: () => ServedIndex): void {
  const invalid = new WeakMap<ServedIndex, number>()
  new Gauge({
    name: 'rulekeeper_rules',
    help: 'Rules served (valid, in the published revision), by kind',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      for (const [kind, ids] of Object.entries(index().sorted)) this.set({ kind }, ids.length)
    },
  })
  new Gauge({
    name: 'rulekeeper_invalid_files',
    help: 'Files of the published revision that are invalid (parse or schema errors, duplicate ids); /status lists them',
    registers: [registry],
    collect() {
      const current = index()
      const n = invalid.get(current) ?? current.invalidFiles().length
      invalid.set(current, n)
      this.set(n)
    },
  })
}

type TestOutcomeLabel = 'pass' | 'fail' | 'error' | 'not_run'
const OUTCOMES: readonly TestOutcomeLabel[] = ['pass', 'fail', 'error', 'not_run']

/** pass; fail (ran, wrong verdict); error (the rule raised, timed out or crashed); not_run (could not run). */
function testOutcomeLabel(o: TestOutcome): TestOutcomeLabel {
  if (o.passed === true) return 'pass'
  if (o.passed === null) return 'not_run'
  return o.errored || o.actual === null ? 'error' : 'fail'
}

/**
 * The engines with their unit-test runs counted: `rulekeeper_rule_tests_total{kind,outcome}`. A
 * run the engine refuses altogether (503: the Python pool is busy or has no sandbox) counts each
 * of the rule's tests as not_run.
 */
export function instrumentEngines(engines: EngineRegistry, registry: Registry): EngineRegistry {
  const tests = new Counter({
    name: 'rulekeeper_rule_tests_total',
    help: 'Rule unit tests run by the API, by kind and outcome (pass, fail, error, not_run)',
    labelNames: ['kind', 'outcome'],
    registers: [registry],
  })
  const out: EngineRegistry = {}
  for (const [kind, engine] of Object.entries(engines) as Array<[keyof EngineRegistry, RuleEngine | undefined]>) {
    if (!engine) continue
    for (const outcome of OUTCOMES) tests.inc({ kind, outcome }, 0)
    const wrapped: RuleEngine = Object.create(engine)
    wrapped.runTests = async (rule, ctx) => {
      let outcomes: TestOutcome[]
      try {
        outcomes = await engine.runTests(rule, ctx)
      } catch (err) {
        const n = Array.isArray(rule.data.Tests) ? rule.data.Tests.length : 0
        if (n > 0) tests.inc({ kind, outcome: 'not_run' }, n)
        throw err
      }
      for (const o of outcomes) tests.inc({ kind, outcome: testOutcomeLabel(o) })
      return outcomes
    }
    out[kind] = wrapped
  }
  return out
}

/** What the Python worker pool reports (engine/python/worker-pool.ts). */
export interface PythonPoolGauges {
  /** Sandboxes by state: idle (started, waiting for a job), starting, busy (running a job). */
  workers(): { idle: number; starting: number; busy: number }
  /** Jobs (the tests of one rule each) waiting for a sandbox. */
  queued(): number
}

export interface PythonPoolMetrics {
  runSeconds: Histogram<'op'>
  timeouts: Counter
  kills: Counter<'reason'>
}

export function registerPythonPoolMetrics(registry: Registry, gauges: PythonPoolGauges): PythonPoolMetrics {
  new Gauge({
    name: 'rulekeeper_python_workers',
    help: 'Python sandboxes by state: idle (ready spares), starting, busy (running a job)',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      for (const [state, n] of Object.entries(gauges.workers())) this.set({ state }, n)
    },
  })
  new Gauge({
    name: 'rulekeeper_python_queue_length',
    help: 'Python jobs (the tests of one rule each) waiting for a sandbox',
    registers: [registry],
    collect() {
      this.set(gauges.queued())
    },
  })
  const kills = new Counter({
    name: 'rulekeeper_python_kills_total',
    help: 'Python sandboxes killed before their job ended, by reason (timeout, cancelled, output_limit, crashed, internal, start_failed)',
    labelNames: ['reason'],
    registers: [registry],
  })
  for (const reason of ['timeout', 'cancelled', 'output_limit', 'crashed']) kills.inc({ reason }, 0)
  return {
    runSeconds: new Histogram({
      name: 'rulekeeper_python_run_duration_seconds',
      help: 'Duration of one Python job (all the tests of one rule, or a module check), queueing excluded',
      labelNames: ['op'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
    timeouts: new Counter({
      name: 'rulekeeper_python_timeouts_total',
      help: 'Python tests stopped by their wall-clock timeout (python.timeoutMs)',
      registers: [registry],
    }),
    kills,
  }
}
