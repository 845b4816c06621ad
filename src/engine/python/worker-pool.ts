// The pool of warm Python workers: started lazily on the first job, at most `poolSize` at once, a
// FIFO queue in front. A worker that dies or passes its backstop is dropped and a new one is started
// for the next job. Jobs fail with 503 (Unavailable) only when no worker can be started at all.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { unavailable } from '../../errors.js'
import type { Logger } from '../../log.js'
import { probeInterpreter, type Interpreter, type ServerEnv } from './interpreter.js'
import type { HelloMessage, JobMessage, PongMessage, ResultMessage } from './protocol.js'
import { workerScriptPath } from './runtime-files.js'
import { PythonWorker } from './worker-process.js'

type Job = JobMessage extends infer J ? (J extends { id: number } ? Omit<J, 'id'> : never) : never

interface Queued {
  job: Job
  backstopMs: number
  resolve(message: ResultMessage | PongMessage): void
  reject(err: Error): void
}

export interface PoolOptions {
  command: string
  poolSize: number
  startTimeoutMs?: number
  logger?: Logger
  /** Where `command` is looked up (PATH) and what the one-off version probe may see. */
  serverEnv: ServerEnv
}

export interface PoolInfo {
  interpreter: Interpreter
  /** What the first worker reported about its isolation (network namespace, uid). */
  isolation?: HelloMessage['isolation']
}

export class WorkerPool {
  private interpreter: Promise<Interpreter> | undefined
  private workers: PythonWorker[] = []
  private starting = 0
  private queue: Queued[] = []
  private scratchRoot: string | undefined
  private nextId = 1
  private closed = false
  private hello: HelloMessage | undefined
  /** Workers started over the pool's life (for tests and metrics). */
  started = 0

  constructor(private readonly opts: PoolOptions) {}

  /** Resolves and probes the interpreter (one short process), without starting a worker. */
  async describe(): Promise<PoolInfo> {
    return { interpreter: await this.probe(), isolation: this.hello?.isolation }
  }

  /** Runs one job on the first free worker. */
  run(job: Job, backstopMs: number): Promise<ResultMessage | PongMessage> {
    if (this.closed) return Promise.reject(unavailable('Python tests cannot run: the worker pool is closed'))
    return new Promise((resolve, reject) => {
      this.queue.push({ job, backstopMs, resolve, reject })
      this.pump()
    })
  }

  /** Kills every worker and removes the scratch root. The pool cannot be used afterwards. */
  async close(): Promise<void> {
    this.closed = true
    for (const q of this.queue.splice(0)) q.reject(unavailable('Python tests cannot run: the worker pool is closed'))
    const workers = this.workers.splice(0)
    for (const w of workers) w.kill()
    await Promise.all(workers.map((w) => w.exited()))
    if (this.scratchRoot) rmSync(this.scratchRoot, { recursive: true, force: true })
  }

  /** Live worker processes (pids), for tests. */
  pids(): number[] {
    return this.workers.filter((w) => !w.dead).map((w) => w.process.pid!)
  }

  private probe(): Promise<Interpreter> {
    if (!this.interpreter) {
      this.interpreter = probeInterpreter(this.opts.command, this.opts.serverEnv).then(
        (found) => {
          this.opts.logger?.info({ python: found.executable, version: found.version, command: found.command }, 'python interpreter for rule tests')
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

  private pump(): void {
    this.workers = this.workers.filter((w) => !w.dead)
    while (this.queue.length > 0) {
      const idle = this.workers.find((w) => !w.dead && !w.busy && w.hello)
      if (!idle) break
      this.dispatch(idle, this.queue.shift()!)
    }
    if (this.queue.length > this.starting && this.workers.length + this.starting < this.opts.poolSize) {
      this.spawnWorker()
    }
  }

  private dispatch(worker: PythonWorker, q: Queued): void {
    worker
      .request({ ...q.job, id: this.nextId++ } as JobMessage, q.backstopMs)
      .then(q.resolve, q.reject)
      .finally(() => {
        // Least recently used first: a worker that just answered is still cleaning up and forking
        // its next child, so the next job goes to another idle worker when there is one.
        const i = this.workers.indexOf(worker)
        if (i >= 0) this.workers.push(...this.workers.splice(i, 1))
        this.pump()
      })
  }

  private spawnWorker(): void {
    this.starting++
    this.startWorker()
      .then((worker) => {
        this.starting--
        if (this.closed) {
          worker.kill()
          return
        }
        this.workers.push(worker)
        worker.process.once('exit', () => this.pump())
        this.pump()
      })
      .catch((err: unknown) => {
        this.starting--
        // Nothing can run: every waiting job learns why, instead of waiting forever.
        const error = err instanceof Error && 'status' in err ? err : unavailable(`Python tests cannot run: ${(err as Error).message}`)
        if (this.workers.length === 0) for (const q of this.queue.splice(0)) q.reject(error)
      })
  }

  private async startWorker(): Promise<PythonWorker> {
    const interpreter = await this.probe()
    const script = workerScriptPath()
    this.scratchRoot ??= mkdtempSync(join(tmpdir(), 'rulekeeper-py-'))
    const worker = new PythonWorker(interpreter.executable, script, this.scratchRoot, this.opts.startTimeoutMs ?? 15_000, this.opts.logger)
    this.started++
    try {
      const hello = await worker.start()
      if (!this.hello) {
        this.hello = hello
        this.opts.logger?.info({ python: hello.python, isolation: hello.isolation }, 'python worker pool started')
      }
      return worker
    } catch (err) {
      worker.kill()
      throw err
    }
  }
}
