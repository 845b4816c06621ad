// Detection's Prometheus series on the server's registry: records evaluated, rule evaluations,
// matches and signals, alerts created, matches the alert limit turned into signals, rule errors, and
// the lag from acceptance to evaluation. No label names a rule: /metrics is open to scrapers
// (per-rule errors: GET /rule-errors, View Alerts).
import { Counter, Histogram, type Registry } from 'prom-client'

export interface DetectMetrics {
  records: Counter
  evaluations: Counter
  matches: Counter<'type'>
  alerts: Counter
  alertsLimited: Counter
  ruleErrors: Counter
  lag: Histogram
}

export function createDetectMetrics(registry: Registry): DetectMetrics {
  const r = [registry]
  return {
    records: new Counter({
      name: 'rulekeeper_detection_records_total',
      help: 'Stored records evaluated',
      registers: r,
    }),
    evaluations: new Counter({
      name: 'rulekeeper_detection_rule_evaluations_total',
      help: 'Rule evaluations (records × rules of their log type)',
      registers: r,
    }),
    matches: new Counter({
      name: 'rulekeeper_detection_matches_total',
      help: 'Matches stored, by type (match: of an alerting rule; signal: CreateAlert false)',
      labelNames: ['type'],
      registers: r,
    }),
    alerts: new Counter({ name: 'rulekeeper_detection_alerts_total', help: 'Alerts created', registers: r }),
    alertsLimited: new Counter({
      name: 'rulekeeper_detection_alert_limited_matches_total',
      help: "Matches stored as signals only: their rule had made its alert limit's alerts in the hour",
      registers: r,
    }),
    ruleErrors: new Counter({
      name: 'rulekeeper_detection_rule_errors_total',
      help: 'Rule errors (which rules: GET /rule-errors, with View Alerts)',
      registers: r,
    }),
    lag: new Histogram({
      name: 'rulekeeper_detection_lag_seconds',
      help: 'From a record accepted (p_parse_time) to its evaluation committed',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300],
      registers: r,
    }),
  }
}
