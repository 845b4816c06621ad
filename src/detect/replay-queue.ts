// Fair places for `POST /replay` (api/replay-route.ts): at most `concurrency` replays run at once and
// one per token; the next ones wait (at most `queue` waiting, one per token) and a freed place goes
// round robin over tokens: to the waiting replay whose token was served longest ago (never: first),
// ties by arrival. One token cannot hold every place; a full queue is a 503 with Retry-After.
import { RulekeeperError } from '../errors.js'

/** A place a replay holds while it runs and its answer is written. */
export interface ReplayPlace {
  /** Told the bytes read so far and in all (Retry-After is estimated from it). */
  progress(read: number, total: number): void
  /** Frees the place (once; later calls do nothing). */
  release(): void
}

interface Running {
  startedAt: number
  read: number
  total: number
}

interface Waiter {
  tokenId: string
  grant: (place: ReplayPlace) => void
}

/** Tokens remembered for round robin (the least recently served are forgotten past it). */
const MAX_REMEMBERED = 10_000

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

export class ReplayQueue {
  /** Token id → its running replay (one per token). */
  private readonly running = new Map<string, Running>()
  private readonly waiting: Waiter[] = []
  /** Token id → when it was last given a place (a counter); insertion order is service order. */
  private readonly served = new Map<string, number>()
  private turns = 0

  constructor(private readonly limits: { concurrency: number; queue: number }) {}

  /** Replays running and waiting now. */
  get size(): { running: number; waiting: number } {
    return { running: this.running.size, waiting: this.waiting.length }
  }

  /**
   * A place for a replay of `tokenId`: at once, or when its turn comes. Throws 503 `Unavailable`
   * when the queue is full or the token already has a replay waiting; rejects with the signal's
   * reason (and leaves the queue) when the signal is aborted while waiting.
   */
  async acquire(tokenId: string, signal: AbortSignal): Promise<ReplayPlace> {
    signal.throwIfAborted()
    if (this.waiting.some((w) => w.tokenId === tokenId)) {
      const wait = this.retryAfter([this.running.get(tokenId)])
      throw this.busy(
        `replay is busy for this token: it has a replay waiting already (one per token, beside one running); retry in ${wait} s`,
        wait,
      )
    }
    return new Promise<ReplayPlace>((resolve, reject) => {
      const waiter: Waiter = {
        tokenId,
        grant: (place) => {
          signal.removeEventListener('abort', onAbort)
          resolve(place)
        },
      }
      const onAbort = () => {
        const i = this.waiting.indexOf(waiter)
        if (i >= 0) this.waiting.splice(i, 1)
        reject(signal.reason)
      }
      this.waiting.push(waiter)
      this.pump()
      if (!this.waiting.includes(waiter)) return // granted at once
      if (this.waiting.length > this.limits.queue) {
        this.waiting.splice(this.waiting.indexOf(waiter), 1)
        const wait = this.retryAfter([...this.running.values()])
        const others = this.waiting.length
        reject(
          this.busy(
            `replay is busy: ${plural(this.running.size, 'replay is running', 'replays are running')} (at most ${this.limits.concurrency} at once)${
              this.limits.queue > 0 ? ` and ${others} waiting (at most ${this.limits.queue})` : ''
            }; retry in ${wait} s`,
            wait,
          ),
        )
        return
      }
      signal.addEventListener('abort', onAbort, { once: true })
    })
  }

  /** Gives the free places, each to the waiting replay (of a token with none running) served longest ago. */
  private pump(): void {
    while (this.running.size < this.limits.concurrency) {
      let next = -1
      let nextTurn = Number.POSITIVE_INFINITY
      this.waiting.forEach((w, i) => {
        if (this.running.has(w.tokenId)) return
        const turn = this.served.get(w.tokenId) ?? -1
        if (turn < nextTurn) {
          next = i
          nextTurn = turn
        }
      })
      if (next < 0) return
      const [w] = this.waiting.splice(next, 1)
      w!.grant(this.place(w!.tokenId))
    }
  }

  private place(tokenId: string): ReplayPlace {
    const run: Running = { startedAt: Date.now(), read: 0, total: 0 }
    this.running.set(tokenId, run)
    this.served.delete(tokenId)
    this.served.set(tokenId, this.turns++)
    if (this.served.size > MAX_REMEMBERED) this.served.delete(this.served.keys().next().value!)
    let held = true
    return {
      progress: (read, total) => {
        run.read = read
        run.total = total
      },
      release: () => {
        if (!held) return
        held = false
        if (this.running.get(tokenId) === run) this.running.delete(tokenId)
        this.pump()
      },
    }
  }

  /** Seconds until the first of these replays should end (from its progress so far), 1 to 3600. */
  private retryAfter(runs: ReadonlyArray<Running | undefined>): number {
    let soonest = Number.POSITIVE_INFINITY
    for (const r of runs) {
      if (!r) continue
      const elapsed = (Date.now() - r.startedAt) / 1000
      const left = r.read > 0 ? (elapsed * (r.total - r.read)) / r.read : 5
      soonest = Math.min(soonest, left)
    }
    return Math.min(3600, Math.max(1, Math.ceil(Number.isFinite(soonest) ? soonest : 5)))
  }

  private busy(message: string, wait: number): RulekeeperError {
    return new RulekeeperError('Unavailable', message, {}, { 'Retry-After': String(wait) })
  }
}
