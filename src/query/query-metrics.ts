// The Prometheus series of scheduled queries on their schedule (the server's registry): runs by
// outcome and how long they took, rows fed to scheduled rules, and the alerts those runs created.
import { Counter, Histogram, type Registry } from 'prom-client'

export interface ScheduledQueryMetrics {
  runs: Counter<'outcome'>
  duration: Histogram
  rows: Counter
  alerts: Counter
}

export function createScheduledQueryMetrics(registry: Registry): ScheduledQueryMetrics {
  const r = [registry]
  return {
    runs: new Counter({
      name: 'rulekeeper_scheduled_query_runs_total',
      help: 'Runs of scheduled queries, by outcome (ok; error: the query failed or timed out, a rule error of each scheduled rule naming it)',
      labelNames: ['outcome'],
      registers: r,
    }),
    duration: new Histogram({
      name: 'rulekeeper_scheduled_query_run_seconds',
      help: 'How long a scheduled query run took: the query, its rows through the scheduled rules, the commit',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers: r,
    }),
    rows: new Counter({
      name: 'rulekeeper_scheduled_query_rows_total',
      help: 'Rows scheduled queries returned (each passed through every enabled scheduled rule naming the query)',
      registers: r,
    }),
    alerts: new Counter({
      name: 'rulekeeper_scheduled_rule_alerts_total',
      help: 'Alerts created by scheduled rules from scheduled query rows',
      registers: r,
    }),
  }
}
