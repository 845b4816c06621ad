// The one bounded reader of request bodies (the rules API's JSON, the push webhook, the HTTP log
// sources), shaped like Hono's body-limit middleware: a declared Content-Length over the limit is
// refused before a byte is read, then the bytes are counted as they arrive and reading stops the
// moment they pass the limit; either way the caller's 413 is thrown. A sink may transform the
// bytes on the way (the log sources inflate gzip under a limit of their own).
import type { IncomingMessage, ServerResponse } from 'node:http'
import { RulekeeperError } from './errors.js'

export interface BodyLimit {
  /** Bytes as they arrive on the wire. */
  maxBytes: number
  /** The answer past the limit: a 413 in the caller's words. */
  tooLarge(): RulekeeperError
  /**
   * What becomes of the rest of a body refused while it is being read: read and discarded, so the
   * answer gets through and the connection stays usable (`drain`, the default), or left unread with
   * the connection closed after the answer (`close`: for a caller not authenticated yet, who must
   * not make us read what it keeps sending). A body refused on its declared length is never read;
   * with `close` the connection is closed after the answer too.
   */
  rest?: 'drain' | 'close'
}

/** Where a body's bytes go while they are read; `done` and `fail` end the read. */
export interface BodySink {
  write(chunk: Buffer): void
  /** The request ended. */
  end(): void
  /** The read was refused: let go of what is held. */
  abort?(): void
}

/** The request being read and its response (a Koa context is one). */
export interface BodyExchange {
  req: IncomingMessage
  res: ServerResponse
}

const closeAfterAnswer = (x: BodyExchange) => x.res.setHeader('Connection', 'close')

/** Throws the limit's 413, unread, when the declared Content-Length is over it. */
export function checkDeclaredLength(x: BodyExchange, limit: BodyLimit): void {
  if (Number(x.req.headers['content-length'] ?? 0) <= limit.maxBytes) return
  if (limit.rest === 'close') closeAfterAnswer(x)
  throw limit.tooLarge()
}

/**
 * Reads the body into `sink` under `limit` (the declared length first, then while streaming).
 * The sink calls `done` with the result or `fail` with a refusal; an aborted request is a 400.
 */
export function readBody<T>(
  x: BodyExchange,
  limit: BodyLimit,
  makeSink: (done: (value: T) => void, fail: (err: unknown) => void) => BodySink,
): Promise<T> {
  checkDeclaredLength(x, limit)
  const { req } = x
  return new Promise<T>((resolve, reject) => {
    let settled = false
    let bytes = 0
    const done = (value: T) => {
      if (settled) return
      settled = true
      resolve(value)
    }
    const fail = (err: unknown) => {
      if (settled) return
      settled = true
      req.off('data', onData)
      sink.abort?.()
      if (limit.rest === 'close') {
        closeAfterAnswer(x)
        req.pause()
      } else req.resume()
      reject(err)
    }
    const sink = makeSink(done, fail)
    function onData(chunk: Buffer) {
      if (settled) return
      bytes += chunk.length
      if (bytes > limit.maxBytes) return fail(limit.tooLarge())
      sink.write(chunk)
    }
    req.on('data', onData)
    req.on('aborted', () => fail(new RulekeeperError('BadRequest', 'the request was aborted')))
    req.on('error', (e) => fail(new RulekeeperError('BadRequest', `the request could not be read: ${e.message}`)))
    req.on('end', () => {
      if (!settled) sink.end()
    })
  })
}

/** The whole body as one buffer, under `limit`. */
export function readBoundedBody(x: BodyExchange, limit: BodyLimit): Promise<Buffer> {
  return readBody<Buffer>(x, limit, (done) => {
    const chunks: Buffer[] = []
    return { write: (c) => chunks.push(c), end: () => done(Buffer.concat(chunks)) }
  })
}
