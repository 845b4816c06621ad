// The shared harness of the ingest-under-SIGKILL tests (test/reliability/detection-crash and
// delivery-crash): a child server on one data directory, an ingest load that remembers which
// records were acknowledged and re-sends the batches a kill cut off, rounds of start → load →
// kill at a chosen moment, and the last start's catch-up (re-send, wait for detection, list alerts).
// What each test checks afterwards stays in the test.
import http from 'node:http'
import { ndjson, post } from '../ingest/helpers.js'
import { startChild, type ChildServer } from './child-server.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** A request error that a kill causes (the load stops and keeps its batch for a later life). */
const CUT_BY_KILL = /ECONNRESET|ECONNREFUSED|socket hang up|EPIPE/

/** `stop.now` set: the load finishes its request in flight and returns. */
export interface Stop {
  now: boolean
}

/**
 * Batches of numbered records posted to /http/editor-audit: `acked` holds every record a 200
 * acknowledged, `unacked` the batches a kill cut off (sent again first, by the next life's load).
 */
export class IngestLoad {
  readonly acked = new Set<number>()
  /** Requests answered 200. */
  requests = 0
  private next = 0
  private unacked: number[][] = []

  constructor(
    private readonly record: (n: number) => object,
    private readonly batch: number,
    /** A pause after each acknowledged batch. */
    private readonly pauseMs = 0,
  ) {}

  /** One sender on one keep-alive connection until `stop.now` or a kill cuts its request. */
  async run(url: string, stop: Stop): Promise<void> {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    try {
      while (!stop.now) {
        const batch = this.unacked.shift() ?? Array.from({ length: this.batch }, () => this.next++)
        try {
          const res = await post(`${url}/http/editor-audit`, ndjson(batch.map(this.record)), undefined, { agent })
          if (res.status !== 200) throw new Error(`status ${res.status}: ${JSON.stringify(res.body)}`)
          for (const n of batch) this.acked.add(n)
          this.requests++
        } catch (err) {
          if (!stop.now && !CUT_BY_KILL.test(String(err))) throw err
          this.unacked.push(batch)
          return
        }
        if (this.pauseMs) await sleep(this.pauseMs) // wait: the load's pace between batches
      }
    } finally {
      agent.destroy()
    }
  }

  /** Sends every cut-off batch again (to a server that stays up); each answer's status, in order. */
  async resend(url: string): Promise<number[]> {
    const statuses: number[] = []
    for (const batch of this.unacked.splice(0)) {
      const res = await post(`${url}/http/editor-audit`, ndjson(batch.map(this.record)))
      statuses.push(res.status)
      for (const n of batch) this.acked.add(n)
    }
    return statuses
  }
}

export interface KillRounds {
  kills: number
  load: IngestLoad
  /** Concurrent senders per life. */
  senders: number
  /** A count that grows as the life makes progress: the kill waits until it moved (up to 10 s). */
  progress: () => number
  /** Then how long to wait before the kill, in ms (drawn once per round, after the progress). */
  killDelayMs: () => number
  /** Called before each round's start. */
  onRound?: (round: number) => void
}

/** A child server on one data directory and one API token; the current child is killed at teardown. */
export class CrashServer {
  child: ChildServer | undefined

  constructor(
    t: { teardown(fn: () => unknown): void },
    readonly dataDir: string,
    readonly env: Record<string, string>,
    private readonly token: string,
  ) {
    t.teardown(() => this.child?.kill())
  }

  async start(): Promise<ChildServer> {
    this.child = await startChild({ dataDir: this.dataDir, env: this.env })
    return this.child
  }

  /** A JSON request to the current child with the API token. */
  async api(method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(`${this.child!.url}${p}`, {
      method,
      headers: { 'X-API-Key': this.token, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    })
    return { status: res.status, body: (await res.json()) as any }
  }

  /** Starts, creates a simple rule (without running its tests), stops cleanly; the create's answer. */
  async createRule(body: object): Promise<{ status: number; body: any }> {
    await this.start()
    const created = await this.api('POST', '/simple-rules?run-tests-first=false', body)
    await this.child!.stop()
    return created
  }

  /** `kills` lives each killed (SIGKILL) under `senders` loads; the sum of their start times in ms. */
  async killRounds(o: KillRounds): Promise<number> {
    let startMs = 0
    for (let round = 0; round < o.kills; round++) {
      o.onRound?.(round)
      const child = await this.start()
      startMs += child.startMs
      const stop = { now: false }
      const senders = Array.from({ length: o.senders }, () => o.load.run(child.url, stop))
      const before = o.progress()
      // wait: poll interval of a wait on a condition
      for (let waited = 0; o.progress() === before && waited < 10_000; waited += 10) await sleep(10)
      await sleep(o.killDelayMs()) // wait: a random kill moment (the crash is the point)
      stop.now = true
      await child.kill()
      await Promise.all(senders)
    }
    return startMs
  }

  /** Waits until /status shows detection caught up (no lag, not failed); throws after 60 s. */
  async detectionCaughtUp(): Promise<void> {
    for (let waited = 0; ; waited += 100) {
      const st = (await this.api('GET', '/status')).body.detection
      if (st.lagSeconds === 0 && !st.failed) return
      if (waited > 60_000) throw new Error(`detection did not catch up: ${JSON.stringify(st)}`)
      await sleep(100) // wait: poll interval of a wait on a condition
    }
  }

  /** Every alert of a rule, all pages. */
  async alerts(ruleId: string): Promise<any[]> {
    const listed: any[] = []
    for (let cursor: string | null = null; ; ) {
      const page = await this.api('GET', `/alerts?rule-id=${ruleId}&limit=1000${cursor ? `&cursor=${cursor}` : ''}`)
      listed.push(...page.body.results)
      cursor = page.body.next
      if (!cursor) return listed
    }
  }
}
