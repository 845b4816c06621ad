// Prometheus metrics (prom-client). One registry per server instance so that tests can run several
// servers in one process; modules get the registry and register their own metrics on it.
import { Registry, collectDefaultMetrics, Counter, Histogram, Gauge } from 'prom-client'

export { Registry, Counter, Histogram, Gauge }

export function createMetricsRegistry(withDefaults = true): Registry {
  const registry = new Registry()
  if (withDefaults) collectDefaultMetrics({ register: registry, prefix: 'rulekeeper_' })
  return registry
}
