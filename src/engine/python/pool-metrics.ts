// The Python worker pool's series: sandboxes by state, queue length, run durations, timeouts and
// kills (docs/operations.md); the pool (worker-pool.ts) registers them and reports into them.
import { Counter, Gauge, Histogram, type Registry } from '../../metrics.js'

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
