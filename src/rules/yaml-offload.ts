// Parsing of large YAML texts off the event loop: one worker thread checks a text with the bounded
// reader before the main thread parses it, so a stream of large hostile texts (alias bombs, texts
// that take 100s of ms to compose) costs the worker, not the requests and /healthz. Only texts
// the worker accepts are parsed again on the main thread (bounded by rules.maxFileBytes).
import type { Worker } from 'node:worker_threads'
import { startModuleWorker } from '../module-worker.js'
import type { YamlProblem } from './yaml-text.js'

/** Texts shorter than this are parsed on the main thread directly (a few ms at most). */
export const OFFLOAD_MIN_CHARS = 16 * 1024

interface Pending {
  resolve(errors: YamlProblem[]): void
}

/** An idle worker is stopped after this long (a started worker can hold the process open at exit). */
const IDLE_MS = 2000

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
  for (const p of pending.values()) p.resolve([{ message }])
  pending.clear()
  worker = undefined
}

function start(): Worker {
  const w = startModuleWorker(import.meta.url, 'yaml-check-worker')
  w.unref()
  w.on('message', (msg: { id: number; errors: YamlProblem[] }) => {
    pending.get(msg.id)?.resolve(msg.errors)
    pending.delete(msg.id)
    stopWhenIdle()
  })
  w.on('error', (err) => failAll(`the YAML could not be parsed: ${err.message}`))
  w.on('exit', () => {
    if (worker === w) failAll('the YAML could not be parsed: the parser stopped')
  })
  return w
}

/** The problems of `text` as the bounded reader finds them, computed in the worker thread. */
export function checkYamlOffThread(text: string): Promise<YamlProblem[]> {
  clearTimeout(idleTimer)
  worker ??= start()
  const id = nextId++
  const w = worker
  return new Promise((resolve) => {
    pending.set(id, { resolve })
    w.postMessage({ id, text })
  })
}
