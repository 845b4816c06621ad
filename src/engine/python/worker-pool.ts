// The pool of sandboxed Python runs. Every job (the tests of one rule) runs in fresh processes of
// its own (sandbox-run.ts), never in one that ran another rule; to keep that cheap, `poolSize`
// spares are started ahead of time (interpreter and runtime loaded, waiting for a job) once the
// pool is first used. At most `poolSize` jobs run at once; the rest wait in per-caller queues served
// round robin, so one caller's burst delays another caller's save by at most one job per slot.
// The queues are bounded (a full one answers 503 with Retry-After); a job whose caller went away or
// ran out of time (an AbortSignal) leaves the queue, or has its process killed. When the kernel
// sandbox cannot start (no bwrap, user namespaces forbidden), every job fails with a clear 503:
// rule code never runs unconfined.
import { dirname } from 'node:path'
import { RulekeeperError, unavailable } from '../../errors.js'
import type { Logger } from '../../log.js'
import type { Registry } from '../../metrics.js'
import { type PythonPoolMetrics, registerPythonPoolMetrics } from './pool-metrics.js'
import { bwrapArgs, hasSetpriv, RUNTIME_DIR, type SandboxLayout } from '../../sandbox/bubblewrap.js'
import { compileFilter } from '../../sandbox/seccomp.js'
import { currentArch } from '../../sandbox/syscalls.js'
import { probeInterpreter, resolveCommand, type Interpreter, type ServerEnv } from './interpreter.js'
import type { Job, TestRecord } from './protocol.js'
import { compileRuntime, type CompiledRuntime } from './runtime-cache.js'
import { runnerScriptPath } from './runtime-files.js'
import { abortReason, SandboxRun, SandboxStartError, type SandboxSpawn } from './sandbox-run.js'

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

export interface PoolOptions {
  command: string
  poolSize: number
  /** Jobs waiting at once, all callers together (default 64); past it, 503 with Retry-After. */
  queueLimit?: number
  /** Jobs one caller may have waiting (default 16). */
  queuePerCaller?: number
  startTimeoutMs?: number
  logger?: Logger
  /** Where `command` and `bwrap` are looked up (PATH) and what the version probe may see. */
  serverEnv: ServerEnv
  /** Size of each run's tmpfs scratch directory (default 16 MiB). */
  scratchBytes?: number
  /** Root only: runs get uids from uidBase up, in rotation over 4096 (never two alive at once). */
  uidBase?: number
  /** Where the pool's series go (workers by state, queue length, run durations, timeouts, kills). */
  metrics?: Registry
}

export interface Isolation {
  sandbox: string
  /** How runs are told apart: a uid of their own (root) or one user namespace each. */
  identity: string
  seccomp: string
  /** The uid the first run reported (inside its namespace). */
  uid?: number
}

export interface PoolInfo {
  interpreter: Interpreter
  isolation?: Isolation
}

const DEFAULT_UID_BASE = 1_900_000_000
/** Root only: how many uids (from uidBase) runs rotate through. */
const UID_SLOTS = 4096

/** What every run of this pool shares; each spare adds its own identity (uid) to it. */
interface SandboxPlan {
  bwrap: string
  layout: SandboxLayout
  runner: string[]
  seccomp: Buffer
}
const RETRY_SANDBOX_MS = 30_000

export class WorkerPool {
  private interpreter: Promise<Interpreter> | undefined
  private spec: Promise<SandboxPlan> | undefined
  /** The runtime folder with its bytecode (runtime-cache.ts), removed at close(). */
  private runtime: CompiledRuntime | undefined
  private spares: SandboxRun[] = []
  private running = new Set<SandboxRun>()
  private queues = new Map<string, Queued[]>()
  private queued = 0
  private active = 0
  private closed = false
  private sandboxError: { error: Error; at: number } | undefined
  private readonly uids = new Set<number>()
  private nextSlot = 0
  private hello: Isolation | undefined
  private avgJobMs = 200
  private readonly metrics: PythonPoolMetrics | undefined

  constructor(private readonly opts: PoolOptions) {
    this.metrics =
      opts.metrics &&
      registerPythonPoolMetrics(opts.metrics, {
        workers: () => {
          const live = this.spares.filter((s) => !s.dead)
          const idle = live.filter((s) => s.hello !== undefined).length
          return { idle, starting: live.length - idle, busy: this.running.size }
        },
        queued: () => this.queued,
      })
  }

  /** Resolves the interpreter and checks that the sandbox starts (the spares, kept for the first jobs). */
  async describe(): Promise<PoolInfo> {
    const interpreter = await this.probe()
    try {
      this.topUp(await this.sandboxSpec())
      await this.spares[0]!.start()
    } catch (err) {
      this.noteSandboxError(err)
    }
    return { interpreter, isolation: this.hello }
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

  /** Resolves once `poolSize` spares are started and waiting (benchmarks measure the warm case). */
  async ready(): Promise<void> {
    this.topUp(await this.sandboxSpec())
    await Promise.all(this.spares.map((s) => s.start().catch(() => {})))
  }

  /** Kills every sandbox. The pool cannot be used afterwards. */
  async close(): Promise<void> {
    this.closed = true
    for (const list of this.queues.values())
      for (const q of list) q.reject(unavailable('Python tests cannot run: the worker pool is closed'))
    this.queues.clear()
    this.queued = 0
    const all = [...this.spares.splice(0), ...this.running]
    for (const s of all) s.kill()
    await Promise.all(all.map((s) => s.exited()))
    this.runtime?.remove()
  }

  /** Live sandbox processes (bwrap pids): spares and running jobs. */
  pids(): number[] {
    return [...this.spares, ...this.running].filter((s) => !s.dead).map((s) => s.process.pid!)
  }

  private probe(): Promise<Interpreter> {
    if (!this.interpreter) {
      this.interpreter = probeInterpreter(this.opts.command, this.opts.serverEnv).then(
        (found) => {
          this.opts.logger?.info(
            { python: found.executable, version: found.version, command: found.command },
            'python interpreter for rule tests',
          )
          return found
        },
        (err: unknown) => {
          this.interpreter = undefined // a later call looks again (e.g. after Python was installed)
          throw err
        },
      )
    }
    return this.interpreter
  }

  private sandboxSpec(): Promise<SandboxPlan> {
    if (!this.spec) {
      this.spec = (async () => {
        const interpreter = await this.probe()
        const arch = currentArch()
        if (!arch)
          throw unavailable(`Python tests cannot run: the rule sandbox has no seccomp table for ${process.arch}`)
        let bwrap: string
        try {
          bwrap = resolveCommand('bwrap', this.opts.serverEnv.PATH ?? '')
        } catch {
          throw unavailable(
            "Python tests cannot run: bubblewrap ('bwrap') was not found on the server's PATH; install it (Debian: apt-get install bubblewrap)",
          )
        }
        if (isRoot() && !hasSetpriv())
          throw unavailable(
            'Python tests cannot run: /usr/bin/setpriv (util-linux) is needed to give each run its own uid',
          )
        if (!this.runtime) {
          const runtime = await compileRuntime(interpreter.executable, dirname(runnerScriptPath()))
          if (runtime.fallback)
            this.opts.logger?.warn(
              { err: runtime.fallback },
              'python runtime not precompiled: every rule run compiles it (slower, as confined)',
            )
          if (this.closed) {
            runtime.remove()
            throw unavailable('Python tests cannot run: the worker pool is closed')
          }
          this.runtime = runtime
        }
        const layout: SandboxLayout = {
          executable: interpreter.executable,
          interpreterPaths: interpreter.paths,
          runtimeDir: this.runtime.dir,
          scratchBytes: this.opts.scratchBytes ?? 16 * 1024 * 1024,
        }
        // -S: no `site`, so no .pth file runs at every start (they cost ~30 ms and execute whatever
        // an installation put there); the runner puts the interpreter's own sys.path back instead,
        // as the probe saw it with `site`, so installed packages stay importable.
        const command = [
          interpreter.executable,
          '-I',
          '-B',
          '-S',
          `${RUNTIME_DIR}/rulekeeper_runner.py`,
          JSON.stringify(interpreter.paths.slice(4)),
        ]
        return { bwrap, layout, runner: command, seccomp: compileFilter(arch) }
      })()
      this.spec.catch(() => (this.spec = undefined))
    }
    return this.spec
  }

  private spawnSpare(plan: SandboxPlan): SandboxRun {
    let uid: number | undefined
    let slot = -1
    if (isRoot()) {
      // Slots rotate through a range far larger than the runs alive at once, so a uid is not given
      // again while the tasks of the run that last had it may still be dying (they would count
      // against the new run's RLIMIT_NPROC, which is per uid).
      slot = this.nextSlot
      while (this.uids.has(slot)) slot = (slot + 1) % UID_SLOTS
      this.nextSlot = (slot + 1) % UID_SLOTS
      this.uids.add(slot)
      uid = (this.opts.uidBase ?? DEFAULT_UID_BASE) + slot
    }
    const spawnSpec: SandboxSpawn = {
      command: plan.bwrap,
      args: bwrapArgs(plan.layout, { uid }, plan.runner),
      seccomp: plan.seccomp,
    }
    const run = new SandboxRun(spawnSpec, this.opts.startTimeoutMs ?? 15_000)
    if (slot >= 0) void run.exited().then(() => this.uids.delete(slot))
    this.watchSpare(run)
    return run
  }

  private watchSpare(run: SandboxRun): void {
    run.start().then(
      (hello) => {
        this.sandboxError = undefined
        if (!this.hello) {
          this.hello = {
            sandbox: 'bubblewrap: mount, pid, network, IPC and UTS namespaces; no capabilities; no_new_privs',
            identity: isRoot()
              ? `a uid of its own per run (from ${this.opts.uidBase ?? DEFAULT_UID_BASE})`
              : 'a user namespace per run (the server uid outside)',
            seccomp: `deny-list filter (${currentArch()})`,
            uid: hello.uid,
          }
          this.opts.logger?.info({ python: hello.python, isolation: this.hello }, 'python sandbox started')
        }
      },
      () => {},
    )
    void run.exited().then(() => {
      const i = this.spares.indexOf(run)
      if (i >= 0) this.spares.splice(i, 1)
    })
  }

  private noteSandboxError(err: unknown): Error {
    const error =
      err instanceof RulekeeperError
        ? err
        : unavailable(
            `Python tests cannot run: the kernel sandbox could not start (${(err as Error).message}); rule code never runs without it`,
          )
    if (!this.sandboxError)
      this.opts.logger?.warn({ err: error.message }, 'python sandbox unavailable: Python tests answer 503')
    this.sandboxError = { error, at: Date.now() }
    return error
  }

  /** Keeps `poolSize` spares starting or ready. */
  private topUp(spec: SandboxPlan): void {
    while (!this.closed && this.spares.length < this.opts.poolSize) this.spares.push(this.spawnSpare(spec))
  }

  private async takeSpare(): Promise<SandboxRun> {
    const spec = await this.sandboxSpec()
    for (let attempt = 0; attempt < 3; attempt++) {
      if (this.spares.length === 0) this.spares.push(this.spawnSpare(spec))
      const spare = this.spares.shift()!
      this.topUp(spec)
      try {
        await spare.start()
      } catch (err) {
        this.metrics?.kills.inc({ reason: 'start_failed' })
        if (attempt === 2 || !(err instanceof SandboxStartError)) throw this.noteSandboxError(err)
        continue
      }
      if (!spare.dead) return spare
    }
    throw this.noteSandboxError(new Error('spares kept dying before their job'))
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
    if (this.sandboxError && Date.now() - this.sandboxError.at < RETRY_SANDBOX_MS) {
      for (let q = this.nextQueued(); q; q = this.nextQueued()) q.reject(this.sandboxError.error)
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
      const sandbox = await this.takeSpare()
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

function isRoot(): boolean {
  return typeof process.geteuid === 'function' && process.geteuid() === 0
}
