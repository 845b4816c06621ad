// Detection on ingest, simple rules (quality.md): the audit-ingest workload (100-record deliveries
// on 32 connections, ack after fsync) against the full server in a child process with 100 enabled
// simple rules on Editor.Audit, and the same with no rules in the same run (the baseline). Reported:
// ingest throughput held (≥ 30,000 records/s), detection lag p99 from acceptance to evaluation
// committed (≤ 2 s, the detector's lag histogram), and rule evaluations per CPU-second of the
// server (≥ 1M/s per core; a lower bound: all the server's CPU counted, ingest included).
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import {
  api,
  counter,
  cpuSeconds,
  detectionCaughtUp,
  lagSummary,
  RULES,
  SOURCE_TOKEN,
  startDetectServer,
  USER,
} from './detect-server.js'
import { type Autocannon, IngestLoad, importAutocannon } from './ingest-load.js'
import type { BenchContext, BenchModule, BenchResult } from './lib.js'

interface Run {
  rules: number
  recordsPerSecond: number
  accepted: number
  p99Ack: number
  errors: number
  /** Seconds from the end of the load until detection had evaluated every record. */
  catchUp: number
  /** The smallest lag bucket holding 99% of the observed lags (s), and the share within 2 s. */
  lagP99: number
  within2s: number
  evaluations: number
  records: number
  /** Server CPU seconds from the start of the load until detection caught up. */
  cpu: number
}

async function measure(ctx: BenchContext, autocannon: Autocannon, rules: number, duration: number): Promise<Run> {
  const child = await startDetectServer(path.join(ctx.tmpDir, `rules${rules}`), rules)
  try {
    // The audit-ingest bench's load, with ten users (for the grouping).
    const load = new IngestLoad(autocannon, child.url, SOURCE_TOKEN, { user: USER })
    ctx.progress(`detect-ingest: ${rules} rules, ${duration} s of load (load average ${os.loadavg()[0]!.toFixed(1)})`)
    await load.run(1) // warm-up
    const warm = load.accepted
    load.accepted = 0
    const cpu0 = await cpuSeconds(child.pid)
    const result = await load.run(duration)
    const seconds = (result.duration as number) ?? duration
    const loadEnd = performance.now()
    // Wait until detection has evaluated every accepted record.
    const status = await detectionCaughtUp(child, warm + load.accepted)
    const catchUp = (performance.now() - loadEnd) / 1000
    const cpu = (await cpuSeconds(child.pid)) - cpu0
    const metrics = (await api(child, 'GET', '/metrics')) as string
    const lag = lagSummary(metrics)
    return {
      rules,
      recordsPerSecond: load.accepted / seconds,
      accepted: load.accepted,
      p99Ack: result.latency.p99 as number,
      errors: (result.errors as number) + (result.timeouts as number) + load.refused,
      catchUp,
      lagP99: lag.p99,
      within2s: lag.within2s,
      evaluations: counter(metrics, 'rulekeeper_detection_rule_evaluations_total'),
      records: status.detection.checkpoint.records,
      cpu,
    }
  } finally {
    await child.kill()
  }
}

const bench: BenchModule = async (ctx: BenchContext): Promise<BenchResult[]> => {
  const autocannon = await importAutocannon()
  const duration = Math.max(3, Math.round(15 * ctx.scale))
  const none = await measure(ctx, autocannon, 0, duration)
  const hundred = await measure(ctx, autocannon, RULES, duration)
  // Rule evaluations per CPU-second, a lower bound: the measured records' evaluations (100 rules ×
  // each record, whether the prefilter or the rule itself said "no match") over ALL the server's
  // CPU in the 100-rule run (ingest, fsync, HTTP included). The rules' own share is the CPU per
  // record with 100 rules over the same without rules (in the notes; within noise once the worker
  // meets only the rules a record's values allow).
  const accepted = (r: Run) => r.accepted
  const extraPerRecord = hundred.cpu / accepted(hundred) - none.cpu / accepted(none)
  const evalsPerCpuSecond = (RULES * hundred.accepted) / hundred.cpu
  const load = os.loadavg()[0]!.toFixed(1)
  const common = `${duration} s of load, 32 connections, 100-record requests; 100 rules: ${hundred.accepted} records accepted, ${hundred.errors} errors, p99 ack ${hundred.p99Ack} ms; without rules: ${none.accepted} records, p99 ack ${none.p99Ack} ms; load average ${load} at the end, 2 shared cores`
  return [
    {
      name: 'ingest throughput with detection, 100 simple rules on the log type',
      target: '>= 30,000 records/s held',
      value: Math.round(hundred.recordsPerSecond),
      unit: 'records/s',
      baseline: {
        name: 'the same ingest, detection with no rules',
        value: Math.round(none.recordsPerSecond),
        unit: 'records/s',
      },
      ratio: Number((hundred.recordsPerSecond / none.recordsPerSecond).toFixed(3)),
      pass: hundred.recordsPerSecond >= 30_000 && hundred.errors === 0,
      notes: common,
    },
    {
      name: 'detection lag p99 (accepted → evaluated and committed), 100 simple rules',
      target: '<= 2 s',
      value: hundred.lagP99,
      unit: 's (histogram bucket)',
      baseline: { name: 'the same without rules', value: none.lagP99, unit: 's (histogram bucket)' },
      pass: hundred.lagP99 <= 2,
      notes: `p99 is the smallest bucket of rulekeeper_detection_lag_seconds holding 99% of the lags (the detector observes every 8th record at its commit); ${(100 * hundred.within2s).toFixed(2)}% within 2 s (${(100 * none.within2s).toFixed(2)}% without rules); detection caught up ${hundred.catchUp.toFixed(2)} s after the load ended (${none.catchUp.toFixed(2)} s without rules)`,
    },
    {
      name: 'rule evaluations on ingest per CPU-second, 100 simple rules',
      target: '>= 1M rule evaluations/s per core',
      value: Math.round(evalsPerCpuSecond),
      unit: 'evaluations/CPU-s',
      baseline: {
        name: 'server CPU per record without rules',
        value: Number(((1e6 * none.cpu) / none.accepted).toFixed(1)),
        unit: 'µs',
      },
      ratio: Number((hundred.cpu / hundred.accepted / (none.cpu / none.accepted)).toFixed(3)),
      pass: evalsPerCpuSecond >= 1_000_000,
      notes: `a lower bound: 100 rules × ${hundred.accepted} records accepted under load (${hundred.evaluations} evaluations counted over all ${hundred.records} records, warm-up included) ÷ all the server's CPU (user + system, /proc, ingest included) from the start of the load until detection caught up, ${hundred.cpu.toFixed(1)} s; per record ${((1e6 * hundred.cpu) / hundred.accepted).toFixed(1)} µs with 100 rules vs ${((1e6 * none.cpu) / none.accepted).toFixed(1)} µs without (the rules' share: ${(1e6 * extraPerRecord).toFixed(1)} µs per record); ratio = CPU per record with rules ÷ without`,
    },
  ]
}

export default bench
