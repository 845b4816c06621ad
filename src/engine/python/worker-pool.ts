// The pool of sandboxed Python runs. Every job (the tests of one rule) runs in fresh processes of
// its own (sandbox-run.ts), never in one that ran another rule; to keep that cheap, `poolSize`
// spares are started ahead of time (sandbox-spares.ts) once the pool is first used. At most
// `poolSize` jobs run at once; the rest wait in per-caller queues served round robin, so one
// caller's burst delays another caller's save by at most one job per slot. The queues are bounded
// (a full one answers 503 with Retry-After); a job whose caller went away or ran out of time (an
// AbortSignal) leaves the queue, or has its process killed. When the kernel sandbox cannot start
// (no bwrap, user namespaces forbidden), every job fails with a clear 503.
import { RulekeeperError, unavailable } from '../../errors.js'
import type { Registry } from '../../metrics.js'
import { type PythonPoolMetrics, registerPythonPoolMetrics } from './pool-metrics.js'
import type { Job, TestRecord } from './protocol.js'
import { abortReason, type SandboxRun } from './sandbox-run.js'
import { type PoolInfo, SandboxSpares, type SpareOptions } from './sandbox-spares.js'

export type { Isolation, PoolInfo } from './sandbox-spares.js'

export interface RunOptions {
  /** Who asked (a token id): the unit of fairness and of the queue limits (none without an owner). */
  owner?: string
  /** Aborts the job: removed from the queue, or its process killed (the reason becomes the message). */
  signal?: AbortSignal
}

/** A job stopped by its AbortSignal before it started. */
export class RunCancelled extends Error {}

interface Queued {
  job: Job
  owner: string
  signal?: AbortSignal
  onAbort?: () => void
  resolve(records: TestRecord[]): void
  reject(err: Error): void
}

export interface PoolOptions extends SpareOptions {
  /** Jobs waiting at once, all callers together (default 64); past it, 503 with Retry-After. */
  queueLimit?: number
  /** Jobs one caller may have waiting (default 16). */
  queuePerCaller?: number
  /** Where the pool's series go (workers by state, queue length, run durations, timeouts, kills). */
  metrics?: Registry
}

export class WorkerPool {
  private readonly spares: SandboxSpares
  private running = new Set<SandboxRun>()
  private queues = new Map<string, Queued[]>()
  private queued = 0
  private active = 0
  private closed = false
  private avgJobMs = 200
  private readonly metrics: PythonPoolMetrics | undefined

  constructor(private readonly opts: PoolOptions) {
    this.metrics =
      opts.metrics &&
      registerPythonPoolMetrics(opts.metrics, {
        workers: () => ({ ...this.spares.counts(), busy: this.running.size }),
        queued: () => this.queued,
      })
    this.spares = new SandboxSpares(opts, () => this.metrics?.kills.inc({ reason: 'start_failed' }))
  }

  /** Resolves the interpreter and checks that the sandbox starts (the spares, kept for the first jobs). */
  describe(): Promise<PoolInfo> {
    return this.spares.describe()
  }

  /**
   * Runs one job: one record per test reached. Rejects with a RulekeeperError (503) when it cannot
   * run, RunCancelled when aborted before it started.
   */
  run(job: Job, opts: RunOptions = {}): Promise<TestRecord[]> {
    if (this.closed) return Promise.reject(unavailable('Python tests cannot run: the worker pool is closed'))
    if (opts.signal?.aborted) return Promise.reject(new RunCancelled(abortReason(opts.signal)))
    const owner = opts.owner ?? ''
    const mine = this.queues.get(owner) ?? []
    const limit = this.opts.queueLimit ?? 64
    const perCaller = this.opts.queuePerCaller ?? 16
    // The bounds protect the server from its callers; the server's own batch work (a CLI test run,
    // no owner) queues everything it has at once.
    if (opts.owner !== undefined && (this.queued >= limit || mine.length >= perCaller)) {
      const retryAfter = Math.max(1, Math.ceil((this.avgJobMs * (this.queued + 1)) / this.opts.poolSize / 1000))
      const who =
        mine.length >= perCaller
          ? `this caller already has ${mine.length} rules waiting`
          : `${this.queued} rules are waiting`
      return Promise.reject(
        new RulekeeperError(
          'Unavailable',
          `Python tests are busy: ${who}; retry in ${retryAfter} s`,
          {},
          { 'Retry-After': String(retryAfter) },
        ),
      )
    }
    return new Promise((resolve, reject) => {
      const q: Queued = { job, owner, signal: opts.signal, resolve, reject }
      if (opts.signal) {
        q.onAbort = () => {
          const list = this.queues.get(owner)
          const i = list?.indexOf(q) ?? -1
          if (i >= 0) {
            list!.splice(i, 1)
            this.queued--
            if (list!.length === 0) this.queues.delete(owner)
            reject(new RunCancelled(abortReason(opts.signal!)))
          }
        }
        opts.signal.addEventListener('abort', q.onAbort, { once: true })
      }
      mine.push(q)
      this.queues.set(owner, mine)
      this.queued++
      this.pump()
    })
  }

  /**
   * A started sandbox for a warm detection worker (warm-worker.ts), taken from the spares like a
   * job's; it counts as busy and is killed at close() with the rest. Rejects with a 503 as jobs do.
   */
  async takeSandbox(): Promise<SandboxRun> {
    if (this.closed) throw unavailable('Python detection cannot run: the worker pool is closed')
    const failing = this.spares.failing()
    if (failing) throw failing
    const sandbox = await this.spares.take()
    if (this.closed) {
      sandbox.kill()
      throw unavailable('Python detection cannot run: the worker pool is closed')
    }
    this.running.add(sandbox)
    void sandbox.exited().then(() => this.running.delete(sandbox))
    return sandbox
  }

  /** Resolves once `poolSize` spares are started and waiting (benchmarks measure the warm case). */
  ready(): Promise<void> {
    return this.spares.ready()
  }

  /** Kills every sandbox. The pool cannot be used afterwards. */
  async close(): Promise<void> {
    this.closed = true
    for (const list of this.queues.values())
      for (const q of list) q.reject(unavailable('Python tests cannot run: the worker pool is closed'))
    this.queues.clear()
    this.queued = 0
    await this.spares.close(this.running)
  }

  /** Live sandbox processes (bwrap pids): spares and running jobs. */
  pids(): number[] {
    return [...this.spares.alive(), ...[...this.running].filter((s) => !s.dead)].map((s) => s.process.pid!)
  }

  private nextQueued(): Queued | undefined {
    const first = this.queues.entries().next()
    if (first.done) return undefined
    const [owner, list] = first.value
    const q = list.shift()!
    this.queues.delete(owner)
    if (list.length > 0) this.queues.set(owner, list) // to the back of the round
    this.queued--
    if (q.signal && q.onAbort) q.signal.removeEventListener('abort', q.onAbort)
    return q
  }

  private pump(): void {
    const failing = this.spares.failing()
    if (failing) {
      for (let q = this.nextQueued(); q; q = this.nextQueued()) q.reject(failing)
      return
    }
    while (this.active < this.opts.poolSize && !this.closed) {
      const q = this.nextQueued()
      if (!q) break
      this.active++
      const started = performance.now()
      this.execute(q.job, q.signal)
        .then(q.resolve, q.reject)
        .finally(() => {
          const ms = performance.now() - started
          this.avgJobMs = this.avgJobMs * 0.8 + ms * 0.2
          this.metrics?.runSeconds.observe({ op: q.job.op }, ms / 1000)
          this.active--
          this.pump()
        })
    }
  }

  /** A run that ended otherwise than by finishing its job was killed (sandbox-run.ts `stop`). */
  private countStop(last: TestRecord | undefined): void {
    if (!this.metrics || !last || last.status === 'ok') return
    // An AbortSignal (caller gone, request budget spent) ends a run with status timeout too.
    const cancelled = last.status === 'timeout' && last.message?.startsWith('not run to the end')
    if (last.status === 'timeout' && !cancelled) this.metrics.timeouts.inc()
    const reason = cancelled ? 'cancelled' : last.status.replace('-', '_')
    this.metrics.kills.inc({ reason })
  }

  private async execute(job: Job, signal?: AbortSignal): Promise<TestRecord[]> {
    const tests = job.tests
    // A stopped run's remaining tests go to a fresh sandbox; a detection job is resumed by its
    // caller instead (engine/python/live-detect.ts), which decides what a stop costs the rule.
    const wanted = job.op === 'test' ? tests.length : job.op === 'check' ? 1 : 0
    const records: TestRecord[] = []
    do {
      if (signal?.aborted) break
      const sandbox = await this.spares.take()
      this.running.add(sandbox)
      const first = records.length
      const batch: TestRecord[] = []
      try {
        await sandbox.run(first === 0 ? job : ({ ...job, tests: tests.slice(first) } as Job), batch, signal)
      } finally {
        this.running.delete(sandbox)
      }
      for (const r of batch) r.i += first
      this.countStop(batch[batch.length - 1])
      records.push(...batch)
      if (batch.length === 0) break // cannot happen with a sane runner; never loop on it
    } while (records.length < wanted)
    return records
  }
}
