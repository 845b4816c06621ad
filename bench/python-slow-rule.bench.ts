// A slow rule slows only itself (issue 28): the full server in a child process with 10
// python-content.ts rules and one unrelated rule that alerts on marker records (one per 100-record
// request, its own dedup), Editor.Audit records posted at a fixed rate through the real log source.
// The unrelated rule's detection lag (a request's acknowledgement → its marker's alert listed by
// GET /alerts) is measured without, then with, a rule that sleeps 5 s in rule() on every record
// (added through the API between the two phases, same server, same run; the first phase starts
// after a harmless rule is added the same way, so both start with a new revision). Reported: the unrelated
// rule's lag p99 with the slow rule over without (target ≤ 2×). Each phase is bounded: markers not
// alerted by its deadline count their wait so far (the p99 is then a lower bound).
import os from 'node:os'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { type BenchContext, type BenchModule, type BenchResult, percentile } from './lib.js'
import { RECORDS_PER_REQUEST } from './offered-load.js'
import { auditEvent } from './python-content.js'
import { startPythonServer, type PythonServer } from './python-server.js'

const RULES = 10
const RATE = 300 // records/s offered: 3 requests/s, 3 markers/s
const SLEEP_S = 5
const TARGET_RATIO = 2
const HOT_EVERY = 200
const UNRELATED = 'Bench.Unrelated.Marker'
const SLOW = 'Bench.Slow.Sleeper'
const NEUTRAL = 'Bench.Slow.Neutral'

const UNRELATED_PY = `def rule(event):
    return str(event.deep_get("metadata", "context", "request_id", default="")).startswith("marker-")


def title(event):
    return "marker " + event.deep_get("metadata", "context", "request_id")


def dedup(event):
    return event.deep_get("metadata", "context", "request_id")
`
const SLOW_PY = `import time


def rule(event):
    time.sleep(${SLEEP_S})
    return False
`

interface Phase {
  /** Lag (s) of each marker; one not alerted by the deadline counts its wait until then. */
  lags: number[]
  missing: number
  accepted: number
  p50: number
  p99: number
}

/** `seconds` of load at RATE, each request's first record a marker; then waits up to `grace` s. */
async function phase(server: PythonServer, first: number, seconds: number, grace: number): Promise<Phase> {
  const interval = (1000 * RECORDS_PER_REQUEST) / RATE
  const due = Math.floor((seconds * 1000) / interval)
  const acked = new Map<string, number>()
  const seen = new Map<string, number>()
  let accepted = 0
  let polling = true
  const poller = (async () => {
    while (polling) {
      const res = await server.api('GET', `/alerts?rule-id=${UNRELATED}&limit=1000`)
      const now = performance.now()
      for (const a of res.results as Array<{ dedup: string }>) if (!seen.has(a.dedup)) seen.set(a.dedup, now)
      await sleep(100) // wait: the poll interval of the alert list
    }
  })()
  const start = performance.now()
  const sends: Promise<void>[] = []
  for (let k = 0; k < due; k++) {
    await sleep(Math.max(0, start + k * interval - performance.now())) // wait: the next request's time
    const marker = `marker-${first + k}`
    const records = Array.from({ length: RECORDS_PER_REQUEST }, (_, j) => {
      const i = (first + k) * RECORDS_PER_REQUEST + j
      const e = auditEvent(i, i % 2, HOT_EVERY)
      if (j === 0) (e.metadata as { context: Record<string, unknown> }).context.request_id = marker
      return e
    })
    sends.push(
      server.ingest(records).then((n) => {
        accepted += n
        acked.set(marker, performance.now())
      }),
    )
  }
  await Promise.all(sends)
  const deadline = performance.now() + grace * 1000
  while (performance.now() < deadline && [...acked.keys()].some((m) => !seen.has(m))) await sleep(100) // wait: the poller's next reading
  polling = false
  await poller
  const end = performance.now()
  const lags: number[] = []
  let missing = 0
  for (const [m, at] of acked) {
    const t = seen.get(m)
    if (t === undefined) missing++
    lags.push(((t ?? end) - at) / 1000)
  }
  return { lags, missing, accepted, p50: percentile(lags, 50), p99: percentile(lags, 99) }
}

const bench: BenchModule = async (ctx: BenchContext): Promise<BenchResult[]> => {
  const seconds = Math.max(5, Math.round(20 * ctx.scale))
  const grace = Math.max(5, Math.round(seconds / 2))
  const server = await startPythonServer(ctx.tmpDir, 'slow', RULES, [
    { id: UNRELATED, name: 'unrelated_marker', source: UNRELATED_PY },
  ])
  try {
    ctx.progress(`python-slow-rule: warm-up (load average ${os.loadavg()[0]!.toFixed(1)})`)
    const warm = await phase(server, 0, 2, 60)
    if (warm.missing > 0) throw new Error('the warm-up markers were not alerted within 60 s')
    // Each phase starts with a new revision (a rule added through the API: new warm workers for
    // it), so the two differ only in what the added rule does.
    const addRule = (id: string, displayName: string, body: string) =>
      server.api('POST', '/rules?run-tests-first=false', {
        id,
        severity: 'LOW',
        displayName,
        logTypes: ['Editor.Audit'],
        body,
        tests: [],
      })
    await addRule(NEUTRAL, 'Never matches', 'def rule(event):\n    return False\n')
    ctx.progress(`python-slow-rule: ${seconds} s at ${RATE} records/s without the slow rule`)
    const without = await phase(server, 1_000, seconds, grace)
    await addRule(SLOW, 'Sleeps on every record', SLOW_PY)
    ctx.progress(`python-slow-rule: ${seconds} s at ${RATE} records/s with a rule sleeping ${SLEEP_S} s per record`)
    const withSlow = await phase(server, 2_000, seconds, grace)
    const errors = (await server.api('GET', `/rule-errors?rule-id=${SLOW}&limit=1000`)).results.length as number
    const status = await server.api('GET', '/status')
    const ratio = withSlow.p99 / without.p99
    const bound = withSlow.missing > 0
    const load = os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join('/')
    return [
      {
        name: `an unrelated Python rule's detection lag p99 beside a rule sleeping ${SLEEP_S} s per record${bound ? ' (a lower bound)' : ''}`,
        target: `<= ${TARGET_RATIO}× its lag without the slow rule`,
        value: Number(withSlow.p99.toFixed(2)),
        unit: 's',
        baseline: {
          name: 'the same rule, same server, without the slow rule',
          value: Number(without.p99.toFixed(2)),
          unit: 's',
        },
        ratio: Number(ratio.toFixed(2)),
        pass: ratio <= TARGET_RATIO && !bound,
        notes: `${RULES} other Python rules; ${RATE} records/s offered for ${seconds} s per phase (100-record requests, one marker each), deadline ${grace} s after each phase's load; lag = acknowledgement → the marker's alert listed by GET /alerts (polled every 100 ms); with the slow rule: p50 ${withSlow.p50.toFixed(2)} s, ${withSlow.missing} of ${withSlow.lags.length} markers not alerted by the deadline (counted at their wait so far), ${withSlow.accepted} records accepted; without: p50 ${without.p50.toFixed(2)} s, ${without.missing} of ${without.lags.length} missing; ${errors}${errors === 1000 ? '+' : ''} rule errors of the slow rule listed, detection lag at the end ${Number(status.detection.lagSeconds).toFixed(1)} s; load average ${load}, 2 shared cores`,
      },
    ]
  } finally {
    await server.close()
  }
}

export default bench
