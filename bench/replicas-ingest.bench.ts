// Ingest with detection on 1, 2 and 3 replicas over one PostgreSQL (issue 30): each phase starts N
// child servers (their own data directories, `RULEKEEPER_REPLICA` rk-a…, one fresh database of one
// PostgreSQL server, fsync on), creates the detect-ingest bench's 100 simple rules on each through
// its API, then offers the detect-ingest load (100-record deliveries, 32 connections in all) split
// over the replicas (one autocannon per replica, the connections shared out) for the same duration.
// Reported per N: records/s held in all and its ratio to one replica; CPU seconds per 1,000 records
// of the replicas' processes (and of PostgreSQL's, and of the load generator, this process, apart);
// detection lag p99 of the worst replica. All on the machine's shared cores: the load generator,
// every replica and PostgreSQL compete for them, so more replicas add no cores, only their costs
// (CPU per record is the figure to compare; on a machine busy with other work, more processes also
// win a larger share of the cores from the scheduler, which the cores-busy figure shows).
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import type { ChildServer } from '../test/helpers/child-server.js'
import { startPostgres, type TestPostgres } from '../test/helpers/postgres-server.js'
import {
  api,
  counter,
  cpuSeconds,
  detectionCaughtUp,
  lagSummary,
  RULES,
  SOURCE_TOKEN,
  startDetectServer,
  treeCpuSeconds,
  USER,
} from './detect-server.js'
import { type Autocannon, CONNECTIONS, IngestLoad, importAutocannon } from './ingest-load.js'
import type { BenchContext, BenchModule, BenchResult } from './lib.js'

const REPLICAS = [1, 2, 3]
const NAMES = ['rk-a', 'rk-b', 'rk-c']

interface Phase {
  replicas: number
  /** Records acknowledged under load, in all and per replica. */
  accepted: number
  perReplica: number[]
  recordsPerSecond: number
  errors: number
  /** Worst p99 acknowledgement latency of the replicas' loads (ms). */
  p99Ack: number
  /** Seconds from the end of the load until every replica's detection had evaluated its records. */
  catchUp: number
  /** CPU seconds from the start of the load until detection caught up: the replicas' (each), PostgreSQL's, this process's. */
  cpu: number[]
  pgCpu: number
  loaderCpu: number
  /** Wall seconds of that interval. */
  wall: number
  /** Worst replica's detection lag p99 (histogram bucket, s) and the lowest share within 2 s. */
  lagP99: number
  within2s: number
  evaluations: number
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)

/** Starts `n` replicas at once on `url`, each with the rules; none is left running when one fails. */
async function startReplicas(ctx: BenchContext, n: number, url: string): Promise<ChildServer[]> {
  const started = await Promise.allSettled(
    NAMES.slice(0, n).map((name) =>
      startDetectServer(path.join(ctx.tmpDir, `n${n}-${name}`), RULES, {
        RULEKEEPER_POSTGRES_URL: url,
        RULEKEEPER_REPLICA: name,
      }),
    ),
  )
  const up = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []))
  const failed = started.find((s) => s.status === 'rejected')
  if (failed) {
    await Promise.all(up.map((c) => c.kill()))
    throw failed.reason
  }
  return up
}

async function phase(
  ctx: BenchContext,
  server: TestPostgres,
  autocannon: Autocannon,
  n: number,
  duration: number,
): Promise<Phase> {
  const database = `replicas_${n}`
  const admin = new pg.Client({ connectionString: server.url() })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${database}`)
  await admin.end()
  const replicas = await startReplicas(ctx, n, server.url(database))
  try {
    // The 32 connections shared out; each replica's records keep ids of their own.
    const loads = replicas.map(
      (c, i) =>
        new IngestLoad(autocannon, c.url, SOURCE_TOKEN, {
          user: USER,
          connections: Math.floor(CONNECTIONS / n) + (i < CONNECTIONS % n ? 1 : 0),
          idPrefix: `${NAMES[i]}-`,
        }),
    )
    ctx.progress(
      `replicas-ingest: ${n} replica(s), ${RULES} rules each, ${duration} s of load (load average ${os.loadavg()[0]!.toFixed(1)})`,
    )
    await Promise.all(loads.map((l) => l.run(1))) // warm-up
    const warm = loads.map((l) => l.accepted)
    for (const l of loads) l.reset()
    const cpu0 = await Promise.all(replicas.map((c) => cpuSeconds(c.pid)))
    const pg0 = await treeCpuSeconds(server.pid)
    const loader0 = process.cpuUsage()
    const t0 = performance.now()
    const results = await Promise.all(loads.map((l) => l.run(duration)))
    const loadEnd = performance.now()
    const seconds = Math.max(...results.map((r) => (r.duration as number) ?? duration))
    await Promise.all(replicas.map((c, i) => detectionCaughtUp(c, warm[i]! + loads[i]!.accepted)))
    const end = performance.now()
    const loader = process.cpuUsage(loader0)
    const cpu = await Promise.all(replicas.map(async (c, i) => (await cpuSeconds(c.pid)) - cpu0[i]!))
    const pgCpu = (await treeCpuSeconds(server.pid)) - pg0
    const metrics = await Promise.all(replicas.map((c) => api(c, 'GET', '/metrics') as Promise<string>))
    const lags = metrics.map(lagSummary)
    const perReplica = loads.map((l) => l.accepted)
    return {
      replicas: n,
      accepted: sum(perReplica),
      perReplica,
      recordsPerSecond: sum(perReplica) / seconds,
      errors: sum(results.map((r, i) => (r.errors as number) + (r.timeouts as number) + loads[i]!.refused)),
      p99Ack: Math.max(...results.map((r) => r.latency.p99 as number)),
      catchUp: (end - loadEnd) / 1000,
      cpu,
      pgCpu,
      loaderCpu: (loader.user + loader.system) / 1e6,
      wall: (end - t0) / 1000,
      lagP99: Math.max(...lags.map((l) => l.p99)),
      within2s: Math.min(...lags.map((l) => l.within2s)),
      evaluations: sum(metrics.map((m) => counter(m, 'rulekeeper_detection_rule_evaluations_total'))),
    }
  } finally {
    await Promise.all(replicas.map((c) => c.kill()))
  }
}

/** CPU seconds per 1,000 records acknowledged. */
const per1000 = (cpu: number, records: number) => (1000 * cpu) / records

function rows(phases: Phase[], duration: number, cores: number): BenchResult[] {
  const one = phases[0]!
  const oneCpu = per1000(sum(one.cpu), one.accepted)
  const out: BenchResult[] = []
  for (const p of phases) {
    const label = `${p.replicas} replica${p.replicas > 1 ? 's' : ''}`
    const vsOne = p.replicas > 1
    const rkCpu = per1000(sum(p.cpu), p.accepted)
    const busy = (sum(p.cpu) + p.pgCpu + p.loaderCpu) / (cores * p.wall)
    out.push({
      name: `ingest with detection (100 simple rules), ${label} over one PostgreSQL, records/s held in all`,
      target: 'measured (issue 30: the ratio to one replica on the shared cores)',
      value: Math.round(p.recordsPerSecond),
      unit: 'records/s',
      ...(vsOne
        ? {
            baseline: { name: 'one replica', value: Math.round(one.recordsPerSecond), unit: 'records/s' },
            ratio: Number((p.recordsPerSecond / one.recordsPerSecond).toFixed(3)),
          }
        : {}),
      pass: p.errors === 0,
      notes: `${duration} s of load, ${CONNECTIONS} connections in all (one autocannon per replica, in the bench process), 100-record requests; ${p.accepted} records accepted (${p.perReplica.join(' / ')} per replica), ${p.errors} errors, worst p99 ack ${p.p99Ack} ms; detection caught up ${p.catchUp.toFixed(2)} s after the load; load average ${os.loadavg()[0]!.toFixed(1)} at the end, ${cores} shared cores`,
    })
    out.push({
      name: `server CPU per 1,000 records, ${label} (the replicas' processes, summed)`,
      target: 'measured (issue 30: CPU per record, the cores being shared)',
      value: Number(rkCpu.toFixed(4)),
      unit: 'CPU-s per 1,000 records',
      ...(vsOne
        ? {
            baseline: { name: 'one replica', value: Number(oneCpu.toFixed(4)), unit: 'CPU-s per 1,000 records' },
            ratio: Number((rkCpu / oneCpu).toFixed(3)),
          }
        : {}),
      pass: true,
      notes: `from the start of the load until detection caught up (${p.wall.toFixed(1)} s): replicas ${p.cpu.map((c) => c.toFixed(1)).join(' + ')} CPU-s (user + system, /proc); PostgreSQL (postmaster and its backends) ${p.pgCpu.toFixed(1)} CPU-s = ${per1000(p.pgCpu, p.accepted).toFixed(4)} per 1,000 records; load generator (this process) ${p.loaderCpu.toFixed(1)} CPU-s = ${per1000(p.loaderCpu, p.accepted).toFixed(4)} per 1,000 records; all three together kept ${(100 * busy).toFixed(0)}% of the ${cores} cores busy`,
    })
    out.push({
      name: `detection lag p99 (accepted → evaluated and committed), worst of ${label}`,
      target: '<= 2 s',
      value: p.lagP99,
      unit: 's (histogram bucket)',
      ...(vsOne ? { baseline: { name: 'one replica', value: one.lagP99, unit: 's (histogram bucket)' } } : {}),
      pass: p.lagP99 <= 2,
      notes: `the smallest bucket of rulekeeper_detection_lag_seconds holding 99% of a replica's lags, the worst replica's; lowest share within 2 s ${(100 * p.within2s).toFixed(2)}%; ${p.evaluations} rule evaluations counted over all replicas (warm-up included)`,
    })
  }
  return out
}

const bench: BenchModule = async (ctx: BenchContext): Promise<BenchResult[]> => {
  const autocannon = await importAutocannon()
  const duration = Math.max(1, Math.round(15 * ctx.scale))
  ctx.progress('replicas-ingest: starting PostgreSQL (fsync on)')
  const server = await startPostgres()
  try {
    const phases: Phase[] = []
    for (const n of REPLICAS) phases.push(await phase(ctx, server, autocannon, n, duration))
    return rows(phases, duration, os.availableParallelism())
  } finally {
    await server.stop()
  }
}

export default bench
