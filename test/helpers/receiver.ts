// A real HTTP receiver on 127.0.0.1 for delivery tests: records every request (headers, raw body,
// the status it answered) and answers as its current `mode` says: a status (with headers), 'hang'
// (never answers; the connection is destroyed at close), or 'drop' (destroys the socket). down()
// stops listening (connections are refused) and up() listens again on the same port.
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export type Answer = { status: number; headers?: Record<string, string> } | 'hang' | 'drop'

export interface Received {
  key: string
  signature: string | undefined
  attempt: string | undefined
  body: string
  answered: number | 'hang' | 'drop'
  at: number
}

export interface Receiver {
  url: string
  got: Received[]
  mode: (r: Received, n: number) => Answer
  /** Keys answered 2xx, with how many times each was. */
  acked(): Map<string, number>
  /** Polls (every 20 ms, at most `ms`) until `ok()`; throws with `what` when it never is. */
  until(ok: () => boolean, what: string, ms?: number): Promise<void>
  /** Stops listening and drops open connections: a receiver that is down (connection refused). */
  down(): Promise<void>
  /** Listens again on the same port. */
  up(): Promise<void>
  close(): Promise<void>
}

export async function startReceiver(mode: Receiver['mode'] = () => ({ status: 200 })): Promise<Receiver> {
  const got: Received[] = []
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const r: Received = {
        key: String(req.headers['idempotency-key']),
        signature: req.headers['x-rulekeeper-signature'] as string | undefined,
        attempt: req.headers['x-rulekeeper-attempt'] as string | undefined,
        body: Buffer.concat(chunks).toString('utf8'),
        answered: 0,
        at: Date.now(),
      }
      const a = rec.mode(r, got.length)
      got.push(r)
      if (a === 'hang') r.answered = 'hang'
      else if (a === 'drop') {
        r.answered = 'drop'
        req.socket.destroy()
      } else {
        r.answered = a.status
        res.writeHead(a.status, a.headers ?? {})
        res.end()
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  const rec: Receiver = {
    url: `http://127.0.0.1:${port}/hook`,
    got,
    mode,
    acked() {
      const m = new Map<string, number>()
      for (const r of got) if (typeof r.answered === 'number' && r.answered < 300) m.set(r.key, (m.get(r.key) ?? 0) + 1)
      return m
    },
    async until(ok, what, ms = 15_000) {
      const end = Date.now() + ms
      while (!ok()) {
        if (Date.now() > end) throw new Error(`timed out waiting: ${what}`)
        await new Promise((r) => setTimeout(r, 20)) // wait: poll interval of a wait on a condition
      }
    },
    down: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
    up: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        if (!server.listening) return resolve()
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
  return rec
}
