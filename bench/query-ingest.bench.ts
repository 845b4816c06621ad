// Issue 29's "ingest while a heavy query runs" target: a real `rulekeeper serve` in a child process
// (the load generator keeps the other core) over a data directory holding one stored day of 1M
// records; the audit-ingest load (100-record deliveries, 32 connections) for N seconds without, then
// with heavy queries back to back through POST /queries, same server, same run. Target: ≥ 0.8×.
import { writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { type ChildServer, startChild } from '../test/helpers/child-server.js'
import { CONNECTIONS, IngestLoad, importAutocannon } from './ingest-load.js'
import type { BenchContext, BenchResult } from './lib.js'
import { percentile } from './lib.js'
import { writeStoredDay } from './stored-events.js'

const TARGET = 0.8
const SOURCE_TOKEN = 'bench-query-ingest-source-token'
const API_TOKEN = 'rk-bench-query-ingest-bootstrap-token-0001'
/** Not the ingest load's day (2026-11-20): the query's work stays the same while ingest stores. */
const DAY = '2026-11-19'
/**
 * The heavy query: the whole day read (a path filter, every record parsed), a window over every
 * row ordered by time per actor, then a GROUP BY with a distinct count, ordered — seconds of DuckDB.
 */
const HEAVY = `WITH day AS (
  SELECT user_email, ip_address, p_event_time, metadata:context.request_id::string AS request_id,
         coalesce(update_user_role:new_role::string, 'none') AS new_role
  FROM editor_audit
  WHERE p_occurs_between('${DAY} 00:00:00', '${DAY} 23:59:59.999')
    AND metadata:id::string LIKE 'rec-%'
), ranked AS (
  SELECT *, row_number() OVER (PARTITION BY user_email ORDER BY p_event_time DESC) AS nth FROM day
)
SELECT user_email, new_role, count(*) AS events, count(DISTINCT request_id) AS requests,
       count(DISTINCT ip_address) AS ips, min(p_event_time) AS first_seen, max(p_event_time) AS last_seen
FROM ranked
WHERE nth > 10
GROUP BY 1, 2
ORDER BY events DESC, user_email, new_role`

interface Phase {
  recordsPerSecond: number
  accepted: number
  seconds: number
  ackP99: number
  errors: number
  notAccepted: number
  healthP99: number
  healthMax: number
  healthChecks: number
  loadBefore: number
  loadAfter: number
}

const load1 = () => os.loadavg()[0]!

/** GET /healthz every 100 ms until `stop` resolves: each answer's latency (ms). */
async function probeHealth(url: string, stop: Promise<void>): Promise<number[]> {
  let done = false
  void stop.then(() => {
    done = true
  })
  const out: number[] = []
  while (!done) {
    const t0 = performance.now()
    const res = await fetch(`${url}/healthz`)
    await res.arrayBuffer()
    if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`)
    out.push(performance.now() - t0)
    await new Promise((r) => setTimeout(r, 100)) // wait: the probe's period — its latency is the measure
  }
  return out
}

async function postQuery(url: string, sql: string, retry = false): Promise<{ rows: number; ms: number }> {
  const t0 = performance.now()
  // A kept-alive socket the server closed while this process was busy (writing the day) fails
  // once with "fetch failed": the first query retries on a new one.
  const res = await fetch(`${url}/queries`, {
    method: 'POST',
    headers: { 'X-API-Key': API_TOKEN, 'Content-Type': 'application/json' },
    body: JSON.stringify({ sql, pageSize: 1000 }),
  }).catch((err: unknown) => {
    if (retry)
      return fetch(`${url}/queries`, {
        method: 'POST',
        headers: { 'X-API-Key': API_TOKEN, 'Content-Type': 'application/json' },
        body: JSON.stringify({ sql, pageSize: 1000 }),
      })
    throw err
  })
  const text = await res.text()
  if (res.status !== 200) throw new Error(`POST /queries: ${res.status} ${text.slice(0, 500)}`)
  return { rows: (JSON.parse(text) as { rows: unknown[] }).rows.length, ms: performance.now() - t0 }
}

/** `seconds` of the ingest load, with /healthz probed meanwhile. */
async function ingestPhase(load: IngestLoad, url: string, seconds: number): Promise<Phase> {
  const loadBefore = load1()
  load.reset()
  let finish!: () => void
  const stop = new Promise<void>((r) => {
    finish = r
  })
  const health = probeHealth(url, stop)
  let result: any
  try {
    result = await load.run(seconds)
  } finally {
    finish()
  }
  const latencies = await health
  const measured = (result.duration as number) ?? seconds
  return {
    recordsPerSecond: load.accepted / measured,
    accepted: load.accepted,
    seconds: measured,
    ackP99: result.latency.p99 as number,
    errors: (result.errors as number) + (result.timeouts as number),
    notAccepted: load.refused + load.partial,
    healthP99: percentile(latencies, 99),
    healthMax: Math.max(...latencies),
    healthChecks: latencies.length,
    loadBefore,
    loadAfter: load1(),
  }
}

async function bench(ctx: BenchContext): Promise<BenchResult[]> {
  const autocannon = await importAutocannon()
  const records = Math.max(10_000, Math.round(1_000_000 * ctx.scale))
  const seconds = Math.max(3, Math.round(20 * ctx.scale))
  const dataDir = path.join(ctx.tmpDir, 'data')
  // queries.threads / queries.nice may be set for a comparison run; default: the service's.
  const env: Record<string, string> = {
    RULEKEEPER_BOOTSTRAP_TOKEN: API_TOKEN,
    RULEKEEPER_EDITOR_AUDIT_TOKEN: SOURCE_TOKEN,
  }
  const overrides = [
    ['threads', process.env.RK_BENCH_QUERY_THREADS],
    ['nice', process.env.RK_BENCH_QUERY_NICE],
  ].filter(([, v]) => v !== undefined && v !== '')
  if (overrides.length > 0) {
    const file = path.join(ctx.tmpDir, 'config.yaml')
    writeFileSync(file, `queries:\n${overrides.map(([k, v]) => `  ${k}: ${Number(v)}\n`).join('')}`)
    env.RULEKEEPER_CONFIG = file
  }
  let server: ChildServer | undefined
  try {
    // The server first, so live detection starts with nothing to read; the day is then written
    // under its logs/ as if ingested earlier (the query engine sees the files at the next query).
    server = await startChild({ dataDir, env, timeoutMs: 120_000 })
    const url = server.url
    const t0 = performance.now()
    const bytes = writeStoredDay(path.join(dataDir, 'logs'), DAY, records)
    ctx.progress(
      `wrote ${records} records (${Math.round(bytes / 1024 ** 2)} MiB) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    )
    const alone = await postQuery(url, HEAVY, true) // warm-up, and the query's time on an idle server
    ctx.progress(
      `the heavy query alone: ${alone.ms.toFixed(0)} ms, ${alone.rows} rows (load average ${load1().toFixed(1)})`,
    )

    const load = new IngestLoad(autocannon, url, SOURCE_TOKEN)
    await load.run(1) // warm-up: JIT, first files and directories
    ctx.progress(
      `ingest without a query: ${seconds} s on ${CONNECTIONS} connections (load average ${load1().toFixed(1)})`,
    )
    const without = await ingestPhase(load, url, seconds)
    ctx.progress(`  ${Math.round(without.recordsPerSecond)} records/s, /healthz p99 ${without.healthP99.toFixed(0)} ms`)

    // Heavy queries back to back for the whole phase (the last one may end after the load).
    const durations: number[] = []
    let querying = true
    let queryError: unknown
    const queries = (async () => {
      while (querying) {
        try {
          durations.push((await postQuery(url, HEAVY)).ms)
        } catch (err) {
          queryError = err
          return
        }
      }
    })()
    ctx.progress(`ingest while heavy queries run: ${seconds} s`)
    const withQuery = await ingestPhase(load, url, seconds)
    querying = false
    await queries
    if (queryError) throw queryError
    ctx.progress(
      `  ${Math.round(withQuery.recordsPerSecond)} records/s, /healthz p99 ${withQuery.healthP99.toFixed(0)} ms, ${durations.length} queries (${durations.map((d) => d.toFixed(0)).join('/')} ms)`,
    )

    const ratio = withQuery.recordsPerSecond / without.recordsPerSecond
    const clean = (p: Phase) => p.errors === 0 && p.notAccepted === 0
    return [
      {
        name: `ingest (100-record requests, ${CONNECTIONS} connections) while heavy queries over a ${records}-record day run back to back`,
        target: '>= 0.8x ingest without them',
        value: Math.round(withQuery.recordsPerSecond),
        unit: 'records/s',
        baseline: {
          name: 'the same load on the same server, no query',
          value: Math.round(without.recordsPerSecond),
          unit: 'records/s',
        },
        ratio: Number(ratio.toFixed(2)),
        pass: ratio >= TARGET && clean(without) && clean(withQuery) && durations.length > 0,
        notes:
          `${seconds} s each; ack p99 ${without.ackP99} → ${withQuery.ackP99} ms; ` +
          `${without.errors + withQuery.errors} errors, ${without.notAccepted + withQuery.notAccepted} responses not fully accepted; ` +
          `load average ${without.loadBefore.toFixed(1)} → ${withQuery.loadAfter.toFixed(1)}`,
      },
      {
        name: 'heavy queries completed during the loaded phase (whole-day window + GROUP BY + distinct counts)',
        target: 'reported',
        value: durations.length,
        unit: 'queries',
        pass: true,
        notes: `durations ${durations.map((d) => d.toFixed(0)).join('/')} ms (median ${percentile(durations, 50).toFixed(0)}); alone on the idle server ${alone.ms.toFixed(0)} ms, ${alone.rows} rows`,
      },
      {
        name: 'GET /healthz p99 while ingest and heavy queries run (event loop responsiveness)',
        target: 'reported',
        value: Math.round(withQuery.healthP99),
        unit: 'ms',
        baseline: { name: 'the same under ingest alone', value: Math.round(without.healthP99), unit: 'ms' },
        pass: true,
        notes: `max ${withQuery.healthMax.toFixed(0)} ms (without queries ${without.healthMax.toFixed(0)} ms); ${withQuery.healthChecks} / ${without.healthChecks} probes every 100 ms`,
      },
    ]
  } catch (err) {
    if (server) ctx.progress(`server output: ${server.output()}`)
    throw err
  } finally {
    await server?.kill()
  }
}

export default bench
