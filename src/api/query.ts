// Query-string parsing for the rules API: strict booleans, bounded integers, repeated or
// comma-separated lists, and unknown parameters reported (a typo in a filter must not silently
// return everything).
import type { ParsedUrlQuery } from 'node:querystring'
import { badRequest } from '../errors.js'
import { kindDef } from '../rules/kinds/index.js'
import { SEVERITIES, type RuleKind } from '../rules/model.js'
import { decodeCursor, type ListQuery } from '../service/rule-views.js'

function single(q: ParsedUrlQuery, name: string): string | undefined {
  const v = q[name]
  if (v === undefined) return undefined
  if (Array.isArray(v)) throw badRequest(`query parameter ${name} is given more than once`)
  return v
}

export function booleanParam(q: ParsedUrlQuery, name: string, dflt: boolean): boolean {
  const v = single(q, name)
  if (v === undefined) return dflt
  if (v === 'true') return true
  if (v === 'false') return false
  throw badRequest(`query parameter ${name} must be true or false`)
}

function listParam(q: ParsedUrlQuery, name: string): string[] | undefined {
  const v = q[name]
  if (v === undefined) return undefined
  const items = (Array.isArray(v) ? v : [v])
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '')
  if (items.length === 0) throw badRequest(`query parameter ${name} is empty`)
  return items
}

export function rejectUnknownParams(q: ParsedUrlQuery, allowed: readonly string[]): void {
  const unknown = Object.keys(q).filter((k) => !allowed.includes(k))
  if (unknown.length > 0)
    throw badRequest(
      `unknown query parameter${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => JSON.stringify(u.slice(0, 64))).join(', ')}; accepted: ${allowed.join(', ')}`,
    )
}

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

/** `limit`: an integer from 1 to 1000, default 100 (lists and history pages). */
export function limitParam(q: ParsedUrlQuery): number {
  const limitText = single(q, 'limit')
  if (limitText === undefined) return 100
  if (!/^\d{1,7}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > 1000)
    throw badRequest('limit must be an integer from 1 to 1000')
  return Number(limitText)
}

export function parseListQuery(kind: RuleKind, q: ParsedUrlQuery): ListQuery {
  rejectUnknownParams(q, listParamsOf(kind))
  const limit = limitParam(q)
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
    after: cursor === undefined || cursor === '' ? null : decodeCursor(kind, cursor),
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
