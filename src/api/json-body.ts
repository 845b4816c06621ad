// Reads a JSON request body by hand instead of with koa-body: koa-body decodes invalid UTF-8 into
// replacement characters without telling, and parses before we can bound nesting. Here: 415 for a
// body that is not JSON, 413 past the limit (bounded-body.ts: Content-Length first, then while reading),
// 400 for invalid UTF-8, invalid JSON, nesting deeper than the bound, numbers beyond the double
// range and `__proto__` keys.
import type Koa from 'koa'
import { RulekeeperError, validationFailed, type FieldProblem } from '../errors.js'
import { type BodyLimit, readBoundedBody } from '../bounded-body.js'
import type { ApiState } from './context.js'

const MAX_JSON_DEPTH = 100
/** At most this many problems of `inspect` are listed (a 1 MiB body could otherwise list 100,000s). */
const MAX_LISTED = 100

const pointerPart = (k: string | number) => String(k).replace(/~/g, '~0').replace(/\//g, '~1')

/**
 * What JSON.parse lets through but the API must not: nesting deeper than `max`, numbers that
 * overflow to ±Infinity (`1e400` would pass an `integer` schema), and `__proto__` keys (a copy of
 * the body into a plain object would turn one into the copy's prototype, hiding the field from the
 * unknown-field check). Iterative, so a deep value cannot overflow the stack.
 */
function inspect(v: unknown, max: number): { tooDeep: boolean; problems: FieldProblem[] } {
  const problems: FieldProblem[] = []
  const stack: Array<[unknown, number, string]> = [[v, 1, '']]
  while (stack.length > 0) {
    const [cur, d, at] = stack.pop()!
    if (problems.length >= MAX_LISTED) break
    if (d > max) return { tooDeep: true, problems }
    if (typeof cur === 'number' && !Number.isFinite(cur))
      problems.push({ path: at, message: 'the number is out of range' })
    else if (Array.isArray(cur)) {
      for (const [i, x] of cur.entries()) stack.push([x, d + 1, `${at}/${i}`])
    } else if (cur && typeof cur === 'object') {
      for (const [k, x] of Object.entries(cur)) {
        if (k === '__proto__') problems.push({ path: `${at}/${pointerPart(k)}`, message: 'unknown field __proto__' })
        stack.push([x, d + 1, `${at}/${pointerPart(k)}`])
      }
    }
  }
  return { tooDeep: false, problems }
}

export function readJsonBody(maxBytes: number): Koa.Middleware<ApiState> {
  const limit: BodyLimit = {
    maxBytes,
    tooLarge: () => new RulekeeperError('PayloadTooLarge', `the body is larger than ${maxBytes} bytes`),
  }
  return async (ctx, next) => {
    const type = ctx.get('Content-Type')
    if (!/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(type)) {
      throw new RulekeeperError(
        'UnsupportedMediaType',
        `the body must be JSON (Content-Type: application/json), got ${type ? JSON.stringify(type.slice(0, 100)) : 'none'}`,
      )
    }
    const charset = /charset=([^;\s]+)/i.exec(type)?.[1]
    if (charset && !/^utf-?8$/i.test(charset.replace(/"/g, ''))) {
      throw new RulekeeperError(
        'UnsupportedMediaType',
        `the body must be UTF-8 encoded, got charset ${charset.slice(0, 40)}`,
      )
    }
    const enc = ctx.get('Content-Encoding')
    if (enc && enc.toLowerCase() !== 'identity') {
      throw new RulekeeperError(
        'UnsupportedMediaType',
        `Content-Encoding ${enc.slice(0, 40)} is not accepted on the rules API`,
      )
    }
    const raw = await readBoundedBody(ctx, limit)
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
      const msg =
        err instanceof RangeError
          ? 'the JSON nests too deeply'
          : `invalid JSON: ${(err as Error).message.slice(0, 200)}`
      throw new RulekeeperError('BadRequest', msg)
    }
    const inspected = inspect(value, MAX_JSON_DEPTH)
    if (inspected.tooDeep)
      throw new RulekeeperError('BadRequest', `the JSON nests deeper than ${MAX_JSON_DEPTH} levels`)
    if (inspected.problems.length > 0) throw validationFailed(inspected.problems)
    ctx.state.body = value
    await next()
  }
}

/**
 * For a POST that needs no body: one that is sent anyway is read as every POST's is (size limit,
 * JSON), then ignored; none at all is not read.
 */
export function optionalJsonBody(maxBytes: number): Koa.Middleware<ApiState> {
  const body = readJsonBody(maxBytes)
  return (ctx, next) => (ctx.request.length || ctx.get('transfer-encoding') ? body(ctx, next) : next())
}
