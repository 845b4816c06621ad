// Ingest with detection, 100 Python rules (issue 28): the full server in a child process with the
// python-content.ts mix (data model, helper, deep_get, title/dedup/alert_context/severity) committed
// to its repository, Editor.Audit records posted through the real log-source route at a fixed
// offered rate (5% over the 5,000 records/s target, 100-record requests on a clock) for a bounded
// time. Reported: records/s held by detection and the detection lag p50/p99 (acknowledgement → the
// committed checkpoint covering it, offered-load.ts). Baseline, same run: the same load on a server
// whose detection has no rules (the ingest path and the detector's own commit cadence: the floor
// any rule set can reach; 100 simple rules cost nothing measurable above it, detect-ingest).
import os from 'node:os'
import type { BenchContext, BenchModule, BenchResult } from './lib.js'
import {
  commitRate,
  commits,
  lagSummary,
  type LagSummary,
  offerLoad,
  type OfferedRun,
  RECORDS_PER_REQUEST,
} from './offered-load.js'
import { auditEvent } from './python-content.js'
import { startPythonServer } from './python-server.js'

const RULES = 100
const TARGET_RATE = 5_000
const OFFERED = Math.round(TARGET_RATE * 1.05)
const TARGET_LAG_S = 5
/** One record in HOT_EVERY / 4 carries what the rules look for (real traffic matches rarely). */
const HOT_EVERY = 200

interface Measured {
  rules: number
  run: OfferedRun
  lag: LagSummary
  /** Records/s detection held (see heldRate). */
  held: number
  matches: number
  alerts: number
  ruleErrors: number
  /** The detector's own lag histogram: the smallest bucket holding 99% of its samples. */
  histogramP99: number
}

/**
 * Records/s held: caught up → the accepted records over the load's duration, or over the time until
 * detection covered them less the allowed lag, whichever is longer; not caught up by the deadline →
 * detection's own rate between its first and last commit of the load (commitRate), or, with one
 * commit, the records covered over the time since the load began (a lower bound).
 */
function heldRate(run: OfferedRun, lag: LagSummary): number {
  if (run.caughtUp !== null)
    return run.accepted / Math.max(run.seconds, (run.caughtUp - run.start) / 1000 - TARGET_LAG_S)
  return commitRate(run) ?? lag.covered / (((run.polls.at(-1)?.at ?? run.deadline) - run.start) / 1000)
}

/** A counter's value, summed over its label sets. */
const metric = (text: string, name: string) =>
  [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)`, 'gm'))].reduce((a, m) => a + Number(m[1]), 0)

function histogramP99(text: string): number {
  const buckets: Array<[number, number]> = []
  for (const m of text.matchAll(/^rulekeeper_detection_lag_seconds_bucket\{le="([^"]+)"\} (\d+)/gm))
    buckets.push([m[1] === '+Inf' ? Number.POSITIVE_INFINITY : Number(m[1]), Number(m[2])])
  const total = buckets.at(-1)?.[1] ?? 0
  return buckets.find(([, n]) => n >= 0.99 * total)?.[0] ?? Number.NaN
}

async function measure(ctx: BenchContext, rules: number, seconds: number, grace: number): Promise<Measured> {
  const server = await startPythonServer(ctx.tmpDir, `rules${rules}`, rules)
  try {
    let i = 0
    const batch = () => Array.from({ length: RECORDS_PER_REQUEST }, () => auditEvent(i, i++ % 2, HOT_EVERY))
    // Warm-up: one request evaluated (the first runs start their sandboxes).
    const warm = await server.ingest(batch())
    if (!(await server.waitEvaluated(warm, 120_000))) throw new Error('the warm-up request was not evaluated in 120 s')
    ctx.progress(
      `python-ingest: ${rules} Python rules, ${OFFERED} records/s offered for ${seconds} s (load average ${os.loadavg()[0]!.toFixed(1)})`,
    )
    const run = await offerLoad(server, OFFERED, seconds, grace, batch)
    const lag = lagSummary(run)
    const metrics = (await server.api('GET', '/metrics')) as string
    return {
      rules,
      run,
      lag,
      held: heldRate(run, lag),
      matches: metric(metrics, 'rulekeeper_detection_matches_total'),
      alerts: metric(metrics, 'rulekeeper_detection_alerts_total'),
      ruleErrors: metric(metrics, 'rulekeeper_detection_rule_errors_total'),
      histogramP99: histogramP99(metrics),
    }
  } finally {
    await server.close()
  }
}

function describe(m: Measured): string {
  const r = m.run
  const catchUp =
    r.caughtUp !== null
      ? `caught up ${((r.caughtUp - r.loadEnd) / 1000).toFixed(1)} s after the load`
      : `NOT caught up ${(((r.polls.at(-1)?.at ?? r.deadline) - r.loadEnd) / 1000).toFixed(0)} s after the load: ${m.lag.covered} of ${r.accepted} records evaluated in ${commits(r).length} commit(s) (${commits(
          r,
        )
          .map((c) => `${c.covered} at ${((c.at - r.start) / 1000).toFixed(1)} s`)
          .join(', ')}), ${m.lag.uncovered} of ${r.acks.length} requests uncovered (their lags are lower bounds)`
  return `${m.rules} rules: ${r.accepted} records accepted (${(r.accepted / r.seconds).toFixed(0)}/s), ${r.skipped} requests skipped (64 in flight), ${r.failed} failed; ${catchUp}; lag p50 ${m.lag.p50.toFixed(2)} s, p99 ${m.lag.p99.toFixed(2)} s, max ${m.lag.max.toFixed(2)} s (the detector's histogram: p99 in the ${m.histogramP99} s bucket); ${m.matches} matches, ${m.alerts} alerts, ${m.ruleErrors} rule errors`
}

const bench: BenchModule = async (ctx: BenchContext): Promise<BenchResult[]> => {
  const seconds = Math.max(4, Math.round(30 * ctx.scale))
  const grace = Math.max(10, Math.round(seconds / 2))
  const rules = Math.max(5, Math.round(RULES * Math.min(1, ctx.scale * 4)))
  const none = await measure(ctx, 0, seconds, grace)
  const python = await measure(ctx, rules, seconds, grace)
  const lower = python.lag.uncovered > 0 ? ' (a lower bound: not caught up)' : ''
  const notes = `offered ${OFFERED} records/s for ${seconds} s (100-record requests on a clock), each run on a fresh server in a child process; deadline ${grace} s after the load; ${describe(python)}; without rules: ${describe(none)}; load average ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join('/')} at the end, 2 shared cores`
  return [
    {
      name: `ingest with detection held, ${rules} Python rules on the log type`,
      target: `>= ${TARGET_RATE.toLocaleString('en-US')} records/s held, lag p99 <= ${TARGET_LAG_S} s`,
      value: Math.round(python.held),
      unit: 'records/s',
      baseline: { name: 'the same load, detection with no rules', value: Math.round(none.held), unit: 'records/s' },
      ratio: Number((python.held / none.held).toFixed(3)),
      pass: python.held >= TARGET_RATE && python.lag.p99 <= TARGET_LAG_S && python.lag.uncovered === 0,
      notes: `held = accepted ÷ max(load time, time until detection covered them − ${TARGET_LAG_S} s), or, when detection did not catch up by the deadline, the records it committed between its first and last commit of the load ÷ the time between them (its own rate while behind); ratio = held with the Python rules ÷ held with no rules (1 = the rules cost nothing the ingest path does not already); ${notes}`,
    },
    {
      name: `detection lag p99 on ingest, ${rules} Python rules at ${OFFERED} records/s${lower}`,
      target: `<= ${TARGET_LAG_S} s`,
      value: Number(python.lag.p99.toFixed(2)),
      unit: 's',
      baseline: { name: 'the same without rules', value: Number(none.lag.p99.toFixed(2)), unit: 's' },
      ratio: Number((python.lag.p99 / none.lag.p99).toFixed(2)),
      pass: python.lag.p99 <= TARGET_LAG_S && python.lag.uncovered === 0,
      notes: `p50 ${python.lag.p50.toFixed(2)} s (without rules ${none.lag.p50.toFixed(2)} s); lag of a request = its acknowledgement → the first /status poll (every 50 ms) whose committed checkpoint counts every record acknowledged by then`,
    },
  ]
}

export default bench
