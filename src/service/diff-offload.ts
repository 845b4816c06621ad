// Rule diffs off the event loop: texts above a small size are diffed by one worker thread, one at a
// time, so a large diff (bounded by unified-diff.ts's limits) costs that worker, not the requests
// and /healthz. Small texts (the usual rule edit) are diffed inline: a worker round trip would cost
// more than the diff.
import type { Worker } from 'node:worker_threads'
import { type ErrorCode, RulekeeperError } from '../errors.js'
import { startModuleWorker } from '../module-worker.js'
import { unifiedDiff } from './unified-diff.js'

/** Texts (both sides together) shorter than this are diffed on the main thread (well under 1 ms). */
export const DIFF_OFFLOAD_MIN_CHARS = 16 * 1024

/** An idle worker is stopped after this long (a started worker can hold the process open at exit). */
const IDLE_MS = 2000

interface Pending {
  resolve(diff: string): void
  reject(err: Error): void
}

let worker: Worker | undefined
let nextId = 0
const pending = new Map<number, Pending>()
let idleTimer: NodeJS.Timeout | undefined

function stopWhenIdle(): void {
  if (pending.size > 0 || !worker) return
  const w = worker
  clearTimeout(idleTimer)
  idleTimer = setTimeout(() => {
    if (worker === w && pending.size === 0) {
      worker = undefined
      void w.terminate()
    }
  }, IDLE_MS)
  idleTimer.unref()
}

function failAll(message: string): void {
  for (const p of pending.values()) p.reject(new Error(message))
  pending.clear()
  worker = undefined
}

type Answer = { id: number; diff: string } | { id: number; error: { code: ErrorCode | 'Internal'; message: string } }

function start(): Worker {
  const w = startModuleWorker(import.meta.url, 'diff-worker')
  w.unref()
  w.on('message', (msg: Answer) => {
    const p = pending.get(msg.id)
    pending.delete(msg.id)
    if ('diff' in msg) p?.resolve(msg.diff)
    else if (msg.error.code === 'Internal') p?.reject(new Error(msg.error.message))
    else p?.reject(new RulekeeperError(msg.error.code, msg.error.message))
    stopWhenIdle()
  })
  w.on('error', (err) => failAll(`the diff worker failed: ${err.message}`))
  w.on('exit', () => {
    if (worker === w) failAll('the diff worker stopped')
  })
  return w
}

/** unifiedDiff(path, before, after), in the worker thread when the texts are large. */
export function unifiedDiffOffThread(path: string, before: string | null, after: string | null): Promise<string> {
  if ((before?.length ?? 0) + (after?.length ?? 0) < DIFF_OFFLOAD_MIN_CHARS) {
    try {
      return Promise.resolve(unifiedDiff(path, before, after))
    } catch (err) {
      return Promise.reject(err)
    }
  }
  clearTimeout(idleTimer)
  worker ??= start()
  const id = nextId++
  const w = worker
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject })
    w.postMessage({ id, path, before, after })
  })
}
