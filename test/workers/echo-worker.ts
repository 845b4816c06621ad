// A worker for the OffloadWorker test: echoes each request's text after `delayMs`, and exits at once
// (without answering) on `exit: true`, or throws on `throw: true`.
import { parentPort } from 'node:worker_threads'

parentPort!.on('message', (msg: { id: number; text: string; delayMs?: number; exit?: boolean; throw?: boolean }) => {
  if (msg.exit) process.exit(3)
  if (msg.throw) throw new Error('echo worker broke')
  setTimeout(() => parentPort!.postMessage({ id: msg.id, text: msg.text, threadId: process.pid }), msg.delayMs ?? 0)
})
