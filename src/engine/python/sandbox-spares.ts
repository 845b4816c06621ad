// The sandboxed processes the Python worker pool runs its jobs in (worker-pool.ts): the
// interpreter probe, the plan every run shares (bubblewrap, the sandbox layout, the seccomp filter,
// the precompiled runtime), and `poolSize` spares started ahead of the jobs (root: each with a uid
// of its own, rotated). When the kernel sandbox cannot start, `failing()` answers the 503 every job
// gets for the next 30 s: rule code never runs unconfined.
import { dirname } from 'node:path'
import { RulekeeperError, unavailable } from '../../errors.js'
import type { Logger } from '../../log.js'
import { bwrapArgs, hasSetpriv, RUNTIME_DIR, type SandboxLayout } from '../../sandbox/bubblewrap.js'
import { compileFilter } from '../../sandbox/seccomp.js'
import { currentArch } from '../../sandbox/syscalls.js'
import { probeInterpreter, resolveCommand, type Interpreter, type ServerEnv } from './interpreter.js'
import { compileRuntime, type CompiledRuntime } from './runtime-cache.js'
import { runnerScriptPath } from './runtime-files.js'
import { SandboxRun, SandboxStartError, type SandboxSpawn } from './sandbox-run.js'

export interface SpareOptions {
  command: string
  poolSize: number
  startTimeoutMs?: number
  logger?: Logger
  /** Where `command` and `bwrap` are looked up (PATH) and what the version probe may see. */
  serverEnv: ServerEnv
  /** Size of each run's tmpfs scratch directory (default 16 MiB). */
  scratchBytes?: number
  /** Root only: runs get uids from uidBase up, in rotation over 4096 (never two alive at once). */
  uidBase?: number
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

export class SandboxSpares {
  private interpreter: Promise<Interpreter> | undefined
  private spec: Promise<SandboxPlan> | undefined
  /** The runtime folder with its bytecode (runtime-cache.ts), removed at close(). */
  private runtime: CompiledRuntime | undefined
  private spares: SandboxRun[] = []
  private closed = false
  private sandboxError: { error: Error; at: number } | undefined
  private readonly uids = new Set<number>()
  private nextSlot = 0
  private hello: Isolation | undefined

  /** `onStartFailed`: a spare did not start (counted as a kill by the pool's metrics). */
  constructor(
    private readonly opts: SpareOptions,
    private readonly onStartFailed: () => void = () => {},
  ) {}

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

  /** Resolves once `poolSize` spares are started and waiting. */
  async ready(): Promise<void> {
    this.topUp(await this.sandboxSpec())
    await Promise.all(this.spares.map((s) => s.start().catch(() => {})))
  }

  /** The error every job gets while the sandbox could not start within the last 30 s. */
  failing(): Error | undefined {
    const e = this.sandboxError
    return e && Date.now() - e.at < RETRY_SANDBOX_MS ? e.error : undefined
  }

  /** Spares alive: started and waiting for a job (idle) or still starting. */
  counts(): { idle: number; starting: number } {
    const live = this.spares.filter((s) => !s.dead)
    const idle = live.filter((s) => s.hello !== undefined).length
    return { idle, starting: live.length - idle }
  }

  /** The spares alive. */
  alive(): SandboxRun[] {
    return this.spares.filter((s) => !s.dead)
  }

  /** Kills every spare and `others` (the running jobs' runs), then removes the runtime folder. */
  async close(others: Iterable<SandboxRun>): Promise<void> {
    this.closed = true
    const all = [...this.spares.splice(0), ...others]
    for (const s of all) s.kill()
    await Promise.all(all.map((s) => s.exited()))
    this.runtime?.remove()
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

  /** A started spare for a job (another is started in its place); rejects with a 503 when none starts. */
  async take(): Promise<SandboxRun> {
    const spec = await this.sandboxSpec()
    for (let attempt = 0; attempt < 3; attempt++) {
      if (this.spares.length === 0) this.spares.push(this.spawnSpare(spec))
      const spare = this.spares.shift()!
      this.topUp(spec)
      try {
        await spare.start()
      } catch (err) {
        this.onStartFailed()
        if (attempt === 2 || !(err instanceof SandboxStartError)) throw this.noteSandboxError(err)
        continue
      }
      if (!spare.dead) return spare
    }
    throw this.noteSandboxError(new Error('spares kept dying before their job'))
  }
}

function isRoot(): boolean {
  return typeof process.geteuid === 'function' && process.geteuid() === 0
}
