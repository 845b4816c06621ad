// One worker thread on a project module for one kind of offloaded work (checking large YAML texts,
// diffing large rule files): started on first use, each request matched to its answer by id,
// stopped after 2 s idle (a started worker can hold the process open at exit), and every waiting
// request failed with WorkerLost when the worker dies.
import type { Worker } from 'node:worker_threads'
import { startModuleWorker } from './module-worker.js'

/** An idle worker is stopped after this long. */
const IDLE_MS = 2000

/** The worker failed (`reason`: its error's message) or stopped (`reason`: 'stopped') before answering. */
export class WorkerLost extends Error {
  constructor(readonly reason: string) {
    super(reason)
  }
}

interface Pending<Answer> {
  resolve(answer: Answer): void
  reject(err: Error): void
}

export class OffloadWorker<Request extends object, Answer extends { id: number }> {
  private worker: Worker | undefined
  private nextId = 0
  private readonly pending = new Map<number, Pending<Answer>>()
  private idleTimer: NodeJS.Timeout | undefined

  /** `module`: the worker's entry (no extension) in the folder of `callerUrl` (the caller's import.meta.url). */
  constructor(
    private readonly callerUrl: string,
    private readonly module: string,
  ) {}

  /** Posts `request` (with an `id` added) and resolves with the worker's answer of that id. */
  run(request: Request): Promise<Answer> {
    clearTimeout(this.idleTimer)
    this.worker ??= this.start()
    const id = this.nextId++
    const w = this.worker
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      w.postMessage({ ...request, id })
    })
  }

  private start(): Worker {
    const w = startModuleWorker(this.callerUrl, this.module)
    w.unref()
    w.on('message', (answer: Answer) => {
      const p = this.pending.get(answer.id)
      this.pending.delete(answer.id)
      p?.resolve(answer)
      this.stopWhenIdle()
    })
    w.on('error', (err) => this.failAll(err.message))
    w.on('exit', () => {
      if (this.worker === w) this.failAll('stopped')
    })
    return w
  }

  private stopWhenIdle(): void {
    if (this.pending.size > 0 || !this.worker) return
    const w = this.worker
    clearTimeout(this.idleTimer)
    this.idleTimer = setTimeout(() => {
      if (this.worker === w && this.pending.size === 0) {
        this.worker = undefined
        void w.terminate()
      }
    }, IDLE_MS)
    this.idleTimer.unref()
  }

  private failAll(reason: string): void {
    for (const p of this.pending.values()) p.reject(new WorkerLost(reason))
    this.pending.clear()
    this.worker = undefined
  }
}
