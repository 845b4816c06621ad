// Prometheus metrics (prom-client): only the registry. One registry per server instance so that
// tests can run several servers in one process; each folder registers its own series on it
// (service/catalog-metrics.ts, engine/engine-metrics.ts, engine/python/pool-metrics.ts, detect/,
// destinations/, ingest/, reconcile/, api/observe.ts). docs/operations.md lists them all.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'

export { Registry, Counter, Gauge, Histogram }

export function createMetricsRegistry(withDefaults = true): Registry {
  const registry = new Registry()
  if (withDefaults) collectDefaultMetrics({ register: registry, prefix: 'rulekeeper_' })
  return registry
}
