// Destinations (alerts.md §4): (1) deliveries/s of the Dispatcher itself (alerts handed over directly,
// as detection's hook does after a commit, no detection in the loop; each outcome journaled with
// fdatasync) to a local receiver answering 204, against raw fetch POSTs/s of the same bodies to the
// same receiver from the same process at the same concurrency; (2) detection while one destination
// hangs (never answers, 10-minute timeout): a real server, batches of records each creating alerts
// routed to a hanging and a healthy receiver — detection lag p99 (ingest acknowledged → detection
// idle) and the healthy receiver's delivery latency p99 (ingest acknowledged → request received),
// against the same server and workload with no hanging destination, in the same run.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import pino from 'pino'
import { Registry } from 'prom-client'
import type { Destination } from '../src/destinations/config.js'
import { DEFAULT_DELIVERY } from '../src/destinations/config.js'
import { Dispatcher } from '../src/destinations/dispatcher.js'
import { DeliveryJournal } from '../src/destinations/journal.js'
import { createDestinationMetrics } from '../src/destinations/metrics.js'
import { alertId } from '../src/detect/grouping.js'
import { makeRecord, ndjson, post, TOKEN } from '../test/ingest/helpers.js'
import { SAMPLE_BODIES, startTestServer } from '../test/helpers/rulekeeper.js'
import { percentile, type BenchContext, type BenchModule, type BenchResult } from './lib.js'

const CONCURRENCY = DEFAULT_DELIVERY.concurrency

interface Sink {
  url: string
  /** Arrival time (performance.now()) of each request, by Idempotency-Key. */
  arrivals: Map<string, number>
  count: number
  close(): Promise<void>
}

/** A local receiver: reads each body, then answers 204 — or, hanging, never answers. */
async function startSink(hang = false): Promise<Sink> {
  const sink = { arrivals: new Map<string, number>(), count: 0 } as Sink
  const server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      sink.count++
      const key = req.headers['idempotency-key']
      if (typeof key === 'string' && !sink.arrivals.has(key)) sink.arrivals.set(key, performance.now())
      if (!hang) {
        res.writeHead(204)
        res.end()
      }
    })
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  sink.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  sink.close = () =>
    new Promise<void>((r) => {
      server.close(() => r())
      server.closeAllConnections()
    })
  return sink
}

/** An alert as GET /alerts/{id} shows it (about 700 bytes of JSON). */
function alertBody(i: number): Record<string, unknown> {
  const id = i.toString(16).padStart(32, '0')
  return {
    id,
    ruleId: 'Bench.Deliver',
    severity: 'HIGH',
    title: `Failed logins for user${i}@example.com`,
    description: 'Repeated failed logins from one user within the dedup period.',
    runbook: 'Check the user with the identity provider; lock the account if needed.',
    dedup: `["user${i}@example.com"]`,
    status: 'OPEN',
    eventCount: 3,
    firstEventTime: '2026-11-20T08:00:00.000Z',
    lastEventTime: '2026-11-20T08:04:00.000Z',
    createdAt: '2026-11-20T08:04:01.000Z',
    updatedAt: '2026-11-20T08:04:01.000Z',
    logTypes: ['Editor.Audit'],
    summaryAttributes: [{ key: 'user_email', values: [{ value: `user${i}@example.com`, count: 3 }] }],
    destinations: [{ id: 'bench', state: 'pending', attempts: 0, lastError: null }],
  }
}

async function rawPosts(url: string, bodies: string[]): Promise<number> {
  let next = 0
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < bodies.length) {
        const i = next++
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': `raw-${i}` },
          body: bodies[i],
          redirect: 'manual',
          signal: AbortSignal.timeout(10_000),
        })
        await res.body?.cancel().catch(() => {})
        if (res.status !== 204) throw new Error(`raw POST: ${res.status}`)
      }
    }),
  )
  return bodies.length / ((performance.now() - t0) / 1000)
}

async function dispatcherRate(ctx: BenchContext, url: string, n: number): Promise<number> {
  const journal = await DeliveryJournal.open(path.join(ctx.tmpDir, 'dispatcher'))
  const dest: Destination = {
    id: 'bench',
    type: 'webhook',
    url,
    urlLabel: url,
    severities: [],
    secret: null,
    concurrency: CONCURRENCY,
    timeoutMs: 10_000,
  }
  const alerts = new Map<string, Record<string, unknown>>()
  for (let i = 0; i < n; i++) {
    const a = alertBody(i)
    alerts.set(a.id as string, a)
  }
  let d: Dispatcher | null = null
  const metrics = createDestinationMetrics(new Registry(), () => d?.counts() ?? new Map())
  d = new Dispatcher({
    destinations: [dest],
    policy: DEFAULT_DELIVERY,
    journal,
    alertView: async (id) => alerts.get(id),
    logger: pino({ level: 'silent' }),
    metrics,
  })
  const dispatcher = d
  const t0 = performance.now()
  const now = Date.now()
  for (const id of alerts.keys())
    dispatcher.add(id, { id: 'bench', state: 'pending', attempts: 0, lastError: null }, now, now)
  for (;;) {
    const c = dispatcher.counts().get('bench')!
    if (c.delivered + c.failed === n) {
      if (c.failed > 0) throw new Error(`${c.failed} deliveries failed`)
      break
    }
    await new Promise((r) => setTimeout(r, 2))
  }
  const rate = n / ((performance.now() - t0) / 1000)
  dispatcher.close()
  await journal.close()
  return rate
}

interface LagRun {
  lagMs: number[]
  deliveryMs: number[]
  alerts: number
  hungRequests: number
}

/** A real server; `batches` ingest requests of `perBatch` records, each record its own HIGH alert. */
async function lagRun(ctx: BenchContext, hanging: boolean, batches: number, perBatch: number): Promise<LagRun> {
  const ok = await startSink()
  const hang = hanging ? await startSink(true) : null
  const destinations: Array<Record<string, unknown>> = [
    { id: 'ok', type: 'webhook', url: ok.url, severities: ['HIGH'] },
  ]
  if (hang) destinations.push({ id: 'hang', type: 'webhook', url: hang.url, severities: ['HIGH'], timeoutMs: 600_000 })
  const s = await startTestServer({
    dataDir: path.join(ctx.tmpDir, hanging ? 'server-hang' : 'server-plain'),
    env: { RULEKEEPER_EDITOR_AUDIT_TOKEN: TOKEN },
    // Every record is its own alert (2,000 at scale 1): the alert limit is not what this measures.
    config: { destinations, detection: { alertsPerRuleHour: 1_000_000 } },
  })
  try {
    const res = await s.request('POST', '/simple-rules?run-tests-first=false', {
      ...SAMPLE_BODIES.simple('Bench.Deliver', {
        logTypes: ['Editor.Audit'],
        detection: '- KeyPath: team_command.command_name\n  Condition: Equals\n  Value: bench\n',
        tests: [],
      }),
      severity: 'HIGH',
      groupBy: '- Key: user_email\n',
    })
    if (res.status !== 200) throw new Error(`rule: ${res.status} ${res.text}`)
    const lagMs: number[] = []
    const ackAt = new Map<string, number>()
    const base = Date.UTC(2026, 10, 20, 8)
    let n = 0
    for (let b = 0; b < batches; b++) {
      const records = Array.from({ length: perBatch }, () => {
        const i = n++
        const r = makeRecord(`bench-${i}`, new Date(base + i * 1000).toISOString(), {
          user_email: `user${i}@example.com`,
        }) as Record<string, unknown>
        delete r.login
        r.team_command = { action: 'create', command_id: 'c1', command_name: 'bench', is_active: true }
        return { r, id: alertId('Bench.Deliver', JSON.stringify([`user${i}@example.com`]), base + i * 1000) }
      })
      const sent = await post(`${s.url}/http/editor-audit`, ndjson(records.map((x) => x.r)))
      if (sent.status !== 200) throw new Error(`ingest: ${sent.status}`)
      const acked = performance.now()
      for (const x of records) ackAt.set(x.id, acked)
      await s.server.detection.detector.idle()
      lagMs.push(performance.now() - acked)
    }
    const deadline = Date.now() + 60_000
    while (ok.arrivals.size < ackAt.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5))
    if (ok.arrivals.size < ackAt.size) throw new Error(`the healthy receiver got ${ok.arrivals.size} of ${ackAt.size}`)
    const deliveryMs = [...ackAt].map(([id, at]) => {
      const got = ok.arrivals.get(id)
      if (got === undefined) throw new Error(`alert ${id} never reached the healthy receiver`)
      return got - at
    })
    return { lagMs, deliveryMs, alerts: ackAt.size, hungRequests: hang?.count ?? 0 }
  } finally {
    await s.close()
    await ok.close()
    await hang?.close()
  }
}

const bench: BenchModule = async (ctx: BenchContext): Promise<BenchResult[]> => {
  const results: BenchResult[] = []
  const sink = await startSink()
  try {
    const n = Math.max(200, Math.round(5000 * ctx.scale))
    const bodies = Array.from({ length: n }, (_, i) => JSON.stringify(alertBody(i)))
    ctx.progress(`destinations: warm-up, then ${n} raw POSTs and ${n} deliveries`)
    await rawPosts(sink.url, bodies.slice(0, 100))
    const raw = await rawPosts(sink.url, bodies)
    const delivered = await dispatcherRate(ctx, sink.url, n)
    const ratio = delivered / raw
    results.push({
      name: `deliveries/s, Dispatcher → local receiver (webhook, concurrency ${CONCURRENCY}, journaled)`,
      target: '≥ 0.5 × raw POSTs/s (the outbox at most halves throughput)',
      value: delivered,
      unit: 'deliveries/s',
      baseline: { name: `raw fetch POSTs, same bodies and concurrency`, value: raw, unit: 'POSTs/s' },
      ratio,
      pass: ratio >= 0.5,
      notes: `${n} alerts of ~${bodies[0]!.length} bytes handed to the Dispatcher directly (no detection); each outcome fdatasynced`,
    })
  } finally {
    await sink.close()
  }

  const batches = Math.max(20, Math.round(100 * ctx.scale))
  const perBatch = 20
  ctx.progress(`destinations: ${batches} batches of ${perBatch} alerts, no hanging destination`)
  const plain = await lagRun(ctx, false, batches, perBatch)
  ctx.progress(`destinations: the same with a hanging destination`)
  const hung = await lagRun(ctx, true, batches, perBatch)
  const lag = { plain: percentile(plain.lagMs, 99), hung: percentile(hung.lagMs, 99) }
  const del = { plain: percentile(plain.deliveryMs, 99), hung: percentile(hung.deliveryMs, 99) }
  results.push({
    name: 'detection lag p99 while one destination hangs',
    target: 'lag p99 ≤ 2 s (quality.md) and ≤ 2 × the lag without it',
    value: lag.hung,
    unit: 'ms',
    baseline: { name: 'no hanging destination', value: lag.plain, unit: 'ms' },
    ratio: lag.hung / lag.plain,
    pass: lag.hung <= 2000 && lag.hung / lag.plain <= 2,
    notes: `${batches} ingest requests of ${perBatch} records, each record one HIGH alert; lag = ingest acknowledged → detection idle; ${hung.hungRequests} requests left hanging`,
  })
  results.push({
    name: "healthy destination's delivery latency p99 while another hangs",
    target: '≤ 2 × the latency without a hanging destination',
    value: del.hung,
    unit: 'ms',
    baseline: { name: 'no hanging destination', value: del.plain, unit: 'ms' },
    ratio: del.hung / del.plain,
    pass: del.hung / del.plain <= 2,
    notes: `${hung.alerts} alerts; latency = ingest acknowledged → request at the healthy receiver`,
  })
  return results
}

export default bench
