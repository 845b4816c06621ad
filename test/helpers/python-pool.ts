// The Python worker pool's state as its metrics show it (engine/python/pool-metrics.ts): sandboxes
// busy with a job, jobs waiting, jobs finished by op. Read from Prometheus text (GET /metrics, or
// the registry an engine was given), so a test waits on the pool's state instead of on a time.

export interface PoolState {
  /** Sandboxes running a job (rulekeeper_python_workers{state="busy"}). */
  busy: number
  /** Jobs waiting for a sandbox (rulekeeper_python_queue_length). */
  queued: number
  /** Jobs finished, by op (test, check, detect, …): rulekeeper_python_run_duration_seconds_count. */
  finished: Record<string, number>
}

function series(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `))
  if (line === undefined) throw new Error(`no ${name} in the metrics: is the pool registered?`)
  return Number(line.slice(name.length + 1))
}

export function poolState(metricsText: string): PoolState {
  const finished: Record<string, number> = {}
  for (const m of metricsText.matchAll(/^rulekeeper_python_run_duration_seconds_count\{op="(\w+)"\} (\d+)$/gm))
    finished[m[1]!] = Number(m[2])
  return {
    busy: series(metricsText, 'rulekeeper_python_workers{state="busy"}'),
    queued: series(metricsText, 'rulekeeper_python_queue_length'),
    finished,
  }
}
