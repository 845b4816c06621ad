// The log sources' Prometheus metrics, registered on the registry the server hands in: records by
// outcome, deliveries by status, and the group-commit fsync latency and batch size.
import { Counter, Histogram, type Registry } from 'prom-client'

export interface IngestMetrics {
  records: Counter<'source' | 'outcome'>
  deliveries: Counter<'source' | 'status'>
  commitSeconds: Histogram<'source'>
  fsyncSeconds: Histogram<'source'>
  batchLines: Histogram<'source'>
}

export function createIngestMetrics(registry: Registry): IngestMetrics {
  return {
    records: new Counter({
      name: 'rulekeeper_ingest_records_total',
      help: 'Log-source records by outcome (accepted, rejected, duplicate, unknown_kind, torn_tail)',
      labelNames: ['source', 'outcome'],
      registers: [registry],
    }),
    deliveries: new Counter({
      name: 'rulekeeper_ingest_deliveries_total',
      help: 'Log-source HTTP deliveries by response status',
      labelNames: ['source', 'status'],
      registers: [registry],
    }),
    fsyncSeconds: new Histogram({
      name: 'rulekeeper_ingest_fsync_seconds',
      help: 'Duration of the fdatasync calls of one group commit (all touched files, in parallel)',
      labelNames: ['source'],
      buckets: [0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
    commitSeconds: new Histogram({
      name: 'rulekeeper_ingest_commit_seconds',
      help: 'Duration of one group commit, from its write to the acknowledgement being allowed',
      labelNames: ['source'],
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [registry],
    }),
    batchLines: new Histogram({
      name: 'rulekeeper_ingest_commit_lines',
      help: 'Lines made durable by one group commit',
      labelNames: ['source'],
      buckets: [1, 10, 100, 300, 1000, 3000, 10000, 30000],
      registers: [registry],
    }),
  }
}
