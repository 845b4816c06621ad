// The destinations' Prometheus series: attempts and final outcomes per destination, request
// durations, and gauges of pending and dead-lettered (failed) deliveries read at scrape time.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client'

export interface DestinationMetrics {
  attempts: Counter<'destination' | 'outcome'>
  deliveries: Counter<'destination' | 'outcome'>
  requestSeconds: Histogram<'destination'>
}

export function createDestinationMetrics(
  registry: Registry,
  counts: () => Map<string, { pending: number; delivered: number; failed: number }>,
): DestinationMetrics {
  const r = [registry]
  new Gauge({
    name: 'rulekeeper_destination_deliveries',
    help: 'Deliveries by destination and state (failed: dead letters waiting for a redelivery)',
    labelNames: ['destination', 'state'],
    registers: r,
    collect() {
      this.reset()
      for (const [destination, c] of counts())
        for (const state of ['pending', 'delivered', 'failed'] as const) this.set({ destination, state }, c[state])
    },
  })
  return {
    attempts: new Counter({
      name: 'rulekeeper_destination_attempts_total',
      help: 'Delivery attempts by destination and outcome (ok, retry: will be tried again, fail: dead letter)',
      labelNames: ['destination', 'outcome'],
      registers: r,
    }),
    deliveries: new Counter({
      name: 'rulekeeper_destination_deliveries_total',
      help: 'Deliveries finished by destination and outcome (delivered, failed)',
      labelNames: ['destination', 'outcome'],
      registers: r,
    }),
    requestSeconds: new Histogram({
      name: 'rulekeeper_destination_request_seconds',
      help: 'Duration of delivery requests (timeouts included)',
      labelNames: ['destination'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: r,
    }),
  }
}
