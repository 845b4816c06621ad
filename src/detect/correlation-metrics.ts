// The Prometheus series of correlation rules on their schedule (the server's registry): runs by
// outcome, the signals counted into correlation matches, and the alerts those runs created.
import { Counter, type Registry } from 'prom-client'

export interface CorrelationMetrics {
  runs: Counter<'outcome'>
  signals: Counter
  alerts: Counter
}

export function createCorrelationMetrics(registry: Registry): CorrelationMetrics {
  const r = [registry]
  return {
    runs: new Counter({
      name: 'rulekeeper_correlation_evaluations_total',
      help: 'Scheduled correlation-rule evaluations, by outcome (ok; error: a rule error; skipped: detection had not caught up)',
      labelNames: ['outcome'],
      registers: r,
    }),
    signals: new Counter({
      name: 'rulekeeper_correlation_signals_counted_total',
      help: 'Signals and matches counted into correlation matches (each once per correlation rule and dedup string)',
      registers: r,
    }),
    alerts: new Counter({
      name: 'rulekeeper_correlation_alerts_total',
      help: 'Alerts created by correlation rules on their schedule',
      registers: r,
    }),
  }
}
