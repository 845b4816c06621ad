// Test helper: one request over a real socket with node:http, sending exactly the headers and body
// bytes a test gives (no Content-Type or Content-Length is added): header values fetch refuses
// (latin1), a Content-Length that lies, chunked uploads, and bodies never finished, for servers
// that must answer from the headers alone. For tests on a real port only.
import http from 'node:http'
import { parseJsonOrUndefined } from './rulekeeper.js'

export interface RawRequestOptions {
  method?: string
  headers?: http.OutgoingHttpHeaders
  body?: Buffer | string
  /** Written in pieces of this many bytes, then ended (chunked unless a Content-Length is given). */
  chunkBytes?: number
  /** Write the body but never end the request; it is destroyed once the answer has been read. */
  unfinished?: boolean
  agent?: http.Agent | false
  /** Reject (and destroy the request) when no answer has been read by then. */
  timeoutMs?: number
}

export interface RawResponse {
  status: number
  headers: http.IncomingHttpHeaders
  body: Buffer
  text: string
  /** The body parsed as JSON, or undefined when it is empty or not JSON. */
  json: any
  /** Milliseconds from sending to the end of the answer. */
  ms: number
}

export function rawRequest(url: string | URL, opts: RawRequestOptions = {}): Promise<RawResponse> {
  const method = opts.method ?? 'GET'
  const started = Date.now()
  return new Promise((resolve, reject) => {
    let answered = false
    const req = http.request(url, { method, headers: opts.headers, agent: opts.agent }, (res) => {
      answered = true
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('error', reject)
      res.on('end', () => {
        clearTimeout(timer)
        if (opts.unfinished) req.destroy()
        const body = Buffer.concat(chunks)
        const text = body.toString('utf8')
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body,
          text,
          json: parseJsonOrUndefined(text),
          ms: Date.now() - started,
        })
      })
    })
    const timer =
      opts.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            req.destroy()
            reject(new Error(`${method} ${String(url)}: no answer within ${opts.timeoutMs} ms`))
          }, opts.timeoutMs)
    // A server may answer before it has read the body and close; once answered, that is no error.
    req.on('error', (err) => {
      if (answered) return
      clearTimeout(timer)
      reject(err)
    })
    const body = typeof opts.body === 'string' ? Buffer.from(opts.body, 'utf8') : opts.body
    if (opts.unfinished) {
      if (body !== undefined) req.write(body)
    } else if (body !== undefined && opts.chunkBytes !== undefined) {
      for (let off = 0; off < body.length; off += opts.chunkBytes) req.write(body.subarray(off, off + opts.chunkBytes))
      req.end()
    } else req.end(body)
  })
}
