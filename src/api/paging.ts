// Query parsing shared by the paged detection routes (alerts, rule errors): single and list
// parameters, `limit` (1–1000, default 100), RFC 3339 times, and opaque cursors (base64url of a
// small JSON array, checked on the way back in). Every bad value is a 400 that names it.
import { badRequest } from '../errors.js'

export type Query = Record<string, string | string[] | undefined>

export function single(q: Query, name: string): string | undefined {
  const v = q[name]
  if (Array.isArray(v)) throw badRequest(`query parameter ${name} is given more than once`)
  return v === '' ? undefined : v
}

export function list(q: Query, name: string): string[] | undefined {
  const v = q[name]
  if (v === undefined) return undefined
  const items = (Array.isArray(v) ? v : [v])
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter(Boolean)
  if (items.length === 0) throw badRequest(`query parameter ${name} is empty`)
  return items
}

export function parseLimit(q: Query): number {
  const text = single(q, 'limit')
  if (text === undefined) return 100
  if (!/^\d{1,7}$/.test(text) || Number(text) < 1 || Number(text) > 1000)
    throw badRequest('limit must be an integer from 1 to 1000')
  return Number(text)
}

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)$/i

export function parseTime(q: Query, name: string): string | undefined {
  const text = single(q, name)
  if (text === undefined) return undefined
  const ms = RFC3339.test(text) ? Date.parse(text) : Number.NaN
  if (Number.isNaN(ms)) throw badRequest(`${name} must be an RFC 3339 time, e.g. 2026-11-20T08:00:00Z`)
  return new Date(ms).toISOString()
}

/** Cursors are opaque: base64url of a small JSON array, checked on the way back in. */
export function encodeCursor(parts: Array<string | number>): string {
  return Buffer.from(JSON.stringify(parts)).toString('base64url')
}

export function decodeCursor<T extends Array<string | number>>(text: string, shape: Array<'s' | 'n'>): T {
  try {
    const v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown
    if (
      Array.isArray(v) &&
      v.length === shape.length &&
      v.every((x, i) => (shape[i] === 's' ? typeof x === 'string' : Number.isSafeInteger(x) && (x as number) >= 0))
    )
      return v as T
  } catch {
    // falls through to the 400
  }
  throw badRequest('cursor is not valid: pass the `next` of the previous page as it is')
}
