// A fixed offered rate of Editor.Audit deliveries for the Python detection benches: 100-record
// requests sent on a clock (not when the previous answer came), each acknowledgement timed, while
// the detector's committed checkpoint is polled; a request's detection lag is the time from its
// acknowledgement to the first poll whose checkpoint covers the records acknowledged up to then.
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { percentile } from './lib.js'
import type { PythonServer } from './python-server.js'

export const RECORDS_PER_REQUEST = 100
/** Requests in flight beyond which a due request is skipped (counted: the offered rate not held). */
const MAX_IN_FLIGHT = 64
const POLL_MS = 50
/** How long past its deadline a load waits for detection's second commit of it. */
const BEHIND_MS = 120_000

export interface Ack {
  /** performance.now() at the answer. */
  at: number
  /** Records acknowledged by then since the load began (this request's included). */
  upTo: number
}

export interface OfferedRun {
  seconds: number
  sent: number
  accepted: number
  skipped: number
  failed: number
  acks: Ack[]
  /** Checkpoint polls: performance.now() and records evaluated since the load began. */
  polls: Array<{ at: number; covered: number }>
  start: number
  loadEnd: number
  /** When the checkpoint covered every accepted record; null if not by the deadline. */
  caughtUp: number | null
  deadline: number
}

/**
 * Offers `recordsPerSecond` for `seconds` (request k holds `body(k)`), then polls until detection
 * has committed every accepted record or `graceSeconds` after the load have passed (and at least
 * two commits of the load were seen, for up to BEHIND_MS more).
 */
export async function offerLoad(
  server: PythonServer,
  recordsPerSecond: number,
  seconds: number,
  graceSeconds: number,
  body: (request: number) => Record<string, unknown>[],
): Promise<OfferedRun> {
  const base = await server.evaluated()
  const run: OfferedRun = {
    seconds,
    sent: 0,
    accepted: 0,
    skipped: 0,
    failed: 0,
    acks: [],
    polls: [],
    start: performance.now(),
    loadEnd: 0,
    caughtUp: null,
    deadline: 0,
  }
  const interval = (1000 * RECORDS_PER_REQUEST) / recordsPerSecond
  const due = Math.floor((seconds * 1000) / interval)
  const inFlight = new Set<Promise<void>>()
  let polling = true
  const poller = (async () => {
    while (polling) {
      const covered = (await server.evaluated()) - base
      run.polls.push({ at: performance.now(), covered })
      await sleep(POLL_MS) // wait: the poll interval of the checkpoint
    }
  })()
  let k = 0
  while (k < due) {
    const now = performance.now()
    while (k < due && now >= run.start + k * interval) {
      const records = body(k++)
      if (inFlight.size >= MAX_IN_FLIGHT) {
        run.skipped++
        continue
      }
      run.sent++
      const p = server.ingest(records).then(
        (n) => {
          run.accepted += n
          run.acks.push({ at: performance.now(), upTo: run.accepted })
        },
        () => void run.failed++,
      )
      inFlight.add(p)
      void p.finally(() => inFlight.delete(p))
    }
    await sleep(Math.max(1, run.start + k * interval - performance.now())) // wait: the next request's time
  }
  await Promise.all([...inFlight])
  run.loadEnd = performance.now()
  run.deadline = run.loadEnd + graceSeconds * 1000
  for (;;) {
    const last = run.polls.at(-1)
    if (last && last.covered >= run.accepted && last.at >= run.loadEnd) {
      run.caughtUp = last.at
      break
    }
    // Past the deadline, a detection that has not yet committed twice gets up to BEHIND_MS more,
    // so that its rate between two commits can be measured (commitRate).
    const now = performance.now()
    if (now > run.deadline && (commits(run).length >= 2 || now > run.deadline + BEHIND_MS)) break
    await sleep(POLL_MS) // wait: the poller's next reading
  }
  polling = false
  await poller
  return run
}

export interface LagSummary {
  /** Lags (s) of every acknowledged request; one not covered by the deadline counts its wait so far. */
  lags: number[]
  p50: number
  p99: number
  max: number
  /** Requests not covered by the deadline (their lags are lower bounds). */
  uncovered: number
  /** Records evaluated since the load began, at the last poll. */
  covered: number
}

export function lagSummary(run: OfferedRun): LagSummary {
  // Acknowledgements and polls are in time order and their counts only grow: one pass over both.
  const acks = run.acks
  const polls = run.polls
  const lags: number[] = []
  let uncovered = 0
  let j = 0
  for (const a of acks) {
    while (j < polls.length && (polls[j]!.at < a.at || polls[j]!.covered < a.upTo)) j++
    const hit = polls[j]
    if (hit) lags.push((hit.at - a.at) / 1000)
    else {
      uncovered++
      lags.push((Math.max(polls.at(-1)?.at ?? a.at, run.deadline) - a.at) / 1000)
    }
  }
  return {
    lags,
    p50: percentile(lags, 50),
    p99: percentile(lags, 99),
    max: lags.length ? Math.max(...lags) : Number.NaN,
    uncovered,
    covered: polls.at(-1)?.covered ?? 0,
  }
}

/** The polls at which the checkpoint moved (detection committed), after the load began. */
export function commits(run: OfferedRun): Array<{ at: number; covered: number }> {
  const out: Array<{ at: number; covered: number }> = []
  let prev = 0
  for (const p of run.polls) {
    if (p.covered <= prev) continue
    out.push(p)
    prev = p.covered
  }
  return out
}

/**
 * Records/s detection evaluated between its first and last commit of the load (null with fewer
 * than two): its own rate while behind, whatever the size of its batches.
 */
export function commitRate(run: OfferedRun): number | null {
  const c = commits(run)
  if (c.length < 2) return null
  return (c.at(-1)!.covered - c[0]!.covered) / ((c.at(-1)!.at - c[0]!.at) / 1000)
}
