// In-process rules of live detection on a worker thread (docs/decisions.md, "Simple rules on a
// worker thread"): the detector hands a chunk's stored lines (one string) to the worker, which
// parses and evaluates them with the revision's rules that carry offloadable data (their engine's
// `live` member says how to build them there, engine/live.ts; sent once per revision) and answers
// only the matches and errors, by record index and rule slot. Everything stateful (grouping,
// output, the checkpoint) stays with the detector, in stored order. Until the worker has loaded (tsx compiles it
// in tests and benches, which can take seconds on a loaded machine) and after any failure, the
// answer is null: the detector then evaluates in-process (after a failure, for good).
import type { Worker } from 'node:worker_threads'
import { startModuleWorker } from '../module-worker.js'
import type { Evaluation, LiveIndex } from './live-rules.js'
import type { RuleWorkerAnswer, RuleWorkerRequest } from './rule-worker-entry.js'

/** What the worker evaluated for a chunk. */
export interface OffloadedChunk {
  /** Per log type, which slots of the detector's rule list the worker evaluated (all: every slot). */
  covered: Map<string, { slots: boolean[]; all: boolean }>
  /** Per record index, the worker's answers other than "no match", by slot (slot order). */
  hits: Array<Array<[number, Evaluation]> | undefined>
}

type Answer = Exclude<RuleWorkerAnswer, { ready: true }>

export class RuleWorker {
  private worker: Worker | null = null
  private loaded: Promise<boolean> | null = null
  private isLoaded = false
  private disabled = false
  private sentFor: LiveIndex | null = null
  /** The rules message of `sentFor` (null: no rule of it runs on the worker), and whether it was sent. */
  private rules: RuleWorkerRequest | null = null
  private rulesSent = false
  private covered: OffloadedChunk['covered'] = new Map()
  private nextId = 0
  private readonly pending = new Map<number, { resolve: (a: Answer | null) => void }>()

  constructor(private readonly onFailure: (message: string) => void) {}

  /** The worker's answers for a chunk (stored lines, in order), or null: evaluate in-process. */
  async evaluate(live: LiveIndex, lines: readonly string[]): Promise<OffloadedChunk | null> {
    if (this.disabled || lines.length === 0) return null
    if (this.sentFor !== live) {
      this.rules = this.plan(live)
      this.sentFor = live
      this.rulesSent = false
    }
    if (this.rules === null) return null
    if (!this.isLoaded) {
      void this.ready()
      return null
    }
    if (!this.rulesSent) {
      this.send(this.rules)
      this.rulesSent = true
    }
    const id = this.nextId++
    const answer = await new Promise<Answer | null>((resolve) => {
      this.pending.set(id, { resolve })
      this.send({ type: 'chunk', id, lines: lines.join('\n') })
    })
    if (answer === null) return null
    if ('error' in answer) {
      this.fail(`the rule worker could not evaluate a chunk: ${answer.error}`)
      return null
    }
    const hits: OffloadedChunk['hits'] = new Array(lines.length)
    const flat = answer.hits
    for (let k = 0; k < flat.length; k += 3) {
      const i = flat[k] as number
      const list = hits[i]
      const hit: [number, Evaluation] = [flat[k + 1] as number, flat[k + 2] as Evaluation]
      if (list) list.push(hit)
      else hits[i] = [hit]
    }
    return { covered: this.covered, hits }
  }

  /** The rules message of a revision (null when no rule of it can run on the worker). */
  private plan(live: LiveIndex): RuleWorkerRequest | null {
    const logTypes: Extract<RuleWorkerRequest, { type: 'rules' }>['logTypes'] = []
    const covered: OffloadedChunk['covered'] = new Map()
    for (const [logType, rules] of live.byLogType) {
      const list: Array<[number, string, string, Readonly<Record<string, unknown>>]> = []
      const slots = rules.map((rule, slot) => {
        const o = rule.offload
        if (o) list.push([slot, rule.meta.id, o.module, o.data])
        return o !== undefined
      })
      if (list.length === 0) continue
      logTypes.push([logType, list])
      covered.set(logType, { slots, all: list.length === rules.length })
    }
    this.covered = covered
    return logTypes.length === 0 ? null : { type: 'rules', logTypes }
  }

  /** Starts the worker if needed; true once it has loaded, false when it failed or is closed. */
  ready(): Promise<boolean> {
    if (this.disabled) return Promise.resolve(false)
    this.loaded ??= new Promise<boolean>((resolve) => {
      const w = startModuleWorker(import.meta.url, 'rule-worker-entry')
      this.worker = w
      w.unref()
      w.on('message', (answer: RuleWorkerAnswer) => {
        if ('ready' in answer) {
          this.isLoaded = true
          return resolve(true)
        }
        const p = this.pending.get(answer.id)
        this.pending.delete(answer.id)
        if (this.pending.size === 0) w.unref()
        p?.resolve(answer)
      })
      w.on('error', (err) => {
        resolve(false)
        this.fail(`the rule worker failed: ${err.message}`)
      })
      w.on('exit', (code) => {
        resolve(false)
        if (this.worker === w) this.fail(`the rule worker stopped (exit code ${code})`)
      })
    })
    return this.loaded
  }

  private send(msg: RuleWorkerRequest): void {
    const w = this.worker
    if (!w) return
    if (msg.type === 'chunk') w.ref() // held while an answer is awaited
    w.postMessage(msg)
  }

  private fail(message: string): void {
    if (this.disabled) return
    void this.stop()
    this.onFailure(message)
  }

  close(): Promise<void> {
    return this.stop()
  }

  /** No more chunks: waiting evaluations answer null, and the worker is terminated. */
  private async stop(): Promise<void> {
    this.disabled = true
    const w = this.worker
    this.worker = null
    for (const p of this.pending.values()) p.resolve(null)
    this.pending.clear()
    await w?.terminate()
  }
}
