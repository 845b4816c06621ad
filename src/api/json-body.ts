// Reads a JSON request body by hand instead of with koa-body: koa-body decodes invalid UTF-8 into
// replacement characters without telling, and parses before we can bound nesting. Here: 415 for a
// body that is not JSON, 413 past the limit (checked on Content-Length first, then while reading),
// 400 for invalid UTF-8, invalid JSON or nesting deeper than the bound.
import type Koa from 'koa'
import { RulekeeperError } from '../errors.js'
import type { ApiState } from './context.js'

export const MAX_JSON_DEPTH = 100

function depthExceeds(v: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[v, 1]]
  while (stack.length > 0) {
    const [cur, d] = stack.pop()!
    if (d > max) return true
    if (Array.isArray(cur)) for (const x of cur) stack.push([x, d + 1])
    else if (cur && typeof cur === 'object') for (const x of Object.values(cur)) stack.push([x, d + 1])
  }
  return false
}

export function readJsonBody(maxBytes: number): Koa.Middleware<ApiState> {
  return async (ctx, next) => {
    const type = ctx.get('Content-Type')
    if (!/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(type)) {
      throw new RulekeeperError('UnsupportedMediaType', `the body must be JSON (Content-Type: application/json), got ${type ? JSON.stringify(type.slice(0, 100)) : 'none'}`)
    }
    const charset = /charset=([^;\s]+)/i.exec(type)?.[1]
    if (charset && !/^utf-?8$/i.test(charset.replace(/"/g, ''))) {
      throw new RulekeeperError('UnsupportedMediaType', `the body must be UTF-8 encoded, got charset ${charset.slice(0, 40)}`)
    }
    const enc = ctx.get('Content-Encoding')
    if (enc && enc.toLowerCase() !== 'identity') {
      throw new RulekeeperError('UnsupportedMediaType', `Content-Encoding ${enc.slice(0, 40)} is not accepted on the rules API`)
    }
    const declared = Number(ctx.get('Content-Length') || '0')
    if (declared > maxBytes) {
      ctx.req.resume()
      throw new RulekeeperError('PayloadTooLarge', `the body is larger than ${maxBytes} bytes`)
    }
    const chunks: Buffer[] = []
    let size = 0
    for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
      size += chunk.length
      if (size > maxBytes) {
        ctx.req.resume()
        throw new RulekeeperError('PayloadTooLarge', `the body is larger than ${maxBytes} bytes`)
      }
      chunks.push(chunk)
    }
    const raw = Buffer.concat(chunks)
    let text: string
    try {
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(raw)
    } catch {
      throw new RulekeeperError('BadRequest', 'the body is not valid UTF-8')
    }
    if (text.trim() === '') throw new RulekeeperError('BadRequest', 'the body is empty; a JSON object is expected')
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (err) {
      const msg = err instanceof RangeError ? 'the JSON nests too deeply' : `invalid JSON: ${(err as Error).message.slice(0, 200)}`
      throw new RulekeeperError('BadRequest', msg)
    }
    if (depthExceeds(value, MAX_JSON_DEPTH)) throw new RulekeeperError('BadRequest', `the JSON nests deeper than ${MAX_JSON_DEPTH} levels`)
    ctx.state.body = value
    await next()
  }
}
