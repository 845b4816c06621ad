// The one query-string and cursor module of the API: strict booleans, bounded integers, repeated or
// comma-separated lists, RFC 3339 times, unknown parameters reported (a typo in a filter must not
// silently return everything), and the opaque cursors of every paged route (base64url of a small
// JSON value, checked on the way back in). Every bad value is a 400 that names it.
import type { ParsedUrlQuery } from 'node:querystring'
import { badRequest } from '../errors.js'
import { kindDef } from '../rules/kinds/index.js'
import { SEVERITIES, type RuleKind } from '../rules/model.js'
import type { ListQuery } from '../service/rule-views.js'

export type Query = ParsedUrlQuery | Record<string, string | string[] | undefined>

/** A parameter given at most once, as it is (`?x=` is the empty string). */
export function single(q: Query, name: string): string | undefined {
  const v = q[name]
  if (Array.isArray(v)) throw badRequest(`query parameter ${name} is given more than once`)
  return v
}

/** A parameter given at most once; an empty one counts as absent. */
export function nonEmpty(q: Query, name: string): string | undefined {
  const v = single(q, name)
  return v === '' ? undefined : v
}

export function booleanParam(q: Query, name: string, dflt: boolean): boolean {
  const v = single(q, name)
  if (v === undefined) return dflt
  if (v === 'true') return true
  if (v === 'false') return false
  throw badRequest(`query parameter ${name} must be true or false`)
}

/** Repeated or comma-separated values; given but empty is a 400. */
export function listParam(q: Query, name: string): string[] | undefined {
  const v = q[name]
  if (v === undefined) return undefined
  const items = (Array.isArray(v) ? v : [v])
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '')
  if (items.length === 0) throw badRequest(`query parameter ${name} is empty`)
  return items
}

export function rejectUnknownParams(q: Query, allowed: readonly string[]): void {
  const unknown = Object.keys(q).filter((k) => !allowed.includes(k))
  if (unknown.length > 0)
    throw badRequest(
      `unknown query parameter${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => JSON.stringify(u.slice(0, 64))).join(', ')}; accepted: ${allowed.join(', ')}`,
    )
}

/** `limit` (its text, as `single` or `nonEmpty` read it): an integer from 1 to 1000, default 100. */
export function parseLimit(text: string | undefined): number {
  if (text === undefined) return 100
  if (!/^\d{1,7}$/.test(text) || Number(text) < 1 || Number(text) > 1000)
    throw badRequest('limit must be an integer from 1 to 1000')
  return Number(text)
}

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)$/i

/** An RFC 3339 time (empty: absent), as an ISO string in UTC. */
export function timeParam(q: Query, name: string): string | undefined {
  const text = nonEmpty(q, name)
  if (text === undefined) return undefined
  const ms = RFC3339.test(text) ? Date.parse(text) : Number.NaN
  if (Number.isNaN(ms)) throw badRequest(`${name} must be an RFC 3339 time, e.g. 2026-11-20T08:00:00Z`)
  return new Date(ms).toISOString()
}

// ---- cursors -------------------------------------------------------------------------------------

/** A cursor: base64url of the JSON of a position (an array or a small object). */
export function encodeCursor(position: unknown): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url')
}

/** The position a cursor names, when `valid` accepts it; anything else is the one 400 of bad cursors. */
export function decodeCursor<T>(text: string, valid: (v: unknown) => v is T): T {
  try {
    if (/^[A-Za-z0-9_-]{1,2000}$/.test(text)) {
      const v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown
      if (valid(v)) return v
    }
  } catch {
    // falls through to the 400
  }
  throw badRequest('cursor is not valid: pass the `next` of the previous page as it is')
}

/** A validator of array positions: `s` a string, `n` a non-negative safe integer. */
export function tuple<T extends Array<string | number>>(...shape: Array<'s' | 'n'>): (v: unknown) => v is T {
  return (v): v is T =>
    Array.isArray(v) &&
    v.length === shape.length &&
    v.every((x, i) => (shape[i] === 's' ? typeof x === 'string' : Number.isSafeInteger(x) && (x as number) >= 0))
}

/** A rule list's cursor: `{ k: kind, a: the last id returned }`. */
export function ruleListCursor(kind: RuleKind, lastId: string): string {
  return encodeCursor({ k: kind, a: lastId })
}

/** A history page's cursor: `{ c: the commit the next page ends before, n: its position }`. */
export function historyCursor(at: { commit: string; n: number }): string {
  return encodeCursor({ c: at.commit, n: at.n })
}

export function decodeHistoryCursor(text: string): { commit: string; n: number } {
  const v = decodeCursor(
    text,
    (x): x is { c: string; n: number } =>
      typeof x === 'object' &&
      x !== null &&
      typeof (x as { c?: unknown }).c === 'string' &&
      typeof (x as { n?: unknown }).n === 'number',
  )
  return { commit: v.c, n: v.n }
}

// ---- rule lists ----------------------------------------------------------------------------------

const COMMON_LIST_PARAMS = [
  'cursor',
  'limit',
  'name-contains',
  'state',
  'severity',
  'tag',
  'created-by',
  'last-modified-by',
]
const listParams = new Map<RuleKind, string[]>()

/** The list parameters of a kind: the common ones, its filters, `include-python` where it has a Python view. */
function listParamsOf(kind: RuleKind): string[] {
  let params = listParams.get(kind)
  if (!params) {
    const def = kindDef(kind)
    params = [
      ...COMMON_LIST_PARAMS,
      ...def.listFilters.map((f) => f.param),
      ...(def.pythonView ? ['include-python'] : []),
    ]
    listParams.set(kind, params)
  }
  return params
}

export function parseListQuery(kind: RuleKind, q: Query): ListQuery {
  rejectUnknownParams(q, listParamsOf(kind))
  const limit = parseLimit(single(q, 'limit'))
  const cursor = single(q, 'cursor')
  const state = single(q, 'state')
  if (state !== undefined && state !== 'enabled' && state !== 'disabled')
    throw badRequest('state must be enabled or disabled')
  const severity = listParam(q, 'severity')?.map((s) => s.toUpperCase())
  const bad = severity?.filter((s) => !(SEVERITIES as readonly string[]).includes(s))
  if (bad && bad.length > 0)
    throw badRequest(
      `severity must be among ${SEVERITIES.join(', ')}; got ${bad.map((b) => JSON.stringify(b.slice(0, 32))).join(', ')}`,
    )
  return {
    limit,
    after:
      cursor === undefined || cursor === ''
        ? null
        : decodeCursor(
            cursor,
            (v): v is { k: string; a: string } =>
              typeof v === 'object' &&
              v !== null &&
              (v as { k?: unknown }).k === kind &&
              typeof (v as { a?: unknown }).a === 'string',
          ).a,
    nameContains: single(q, 'name-contains'),
    state: state as ListQuery['state'],
    severity,
    tag: listParam(q, 'tag'),
    createdBy: single(q, 'created-by'),
    lastModifiedBy: single(q, 'last-modified-by'),
    anyOf: kindDef(kind).listFilters.flatMap((f) => {
      const values = listParam(q, f.param)
      return values ? [{ field: f.field, values }] : []
    }),
    includePython: booleanParam(q, 'include-python', false),
  }
}
