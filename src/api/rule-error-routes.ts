// The rule-error routes (alerts.md §1, §3), View Alerts: GET /rule-errors (newest first, one by one),
// GET /rule-errors/groups (one entry per rule and error text, with its count) — both filtered by
// rule id and `since`, in cursor pages — and GET /rule-errors/record (the stored record a rule error
// names). Served from a RuleErrorSource handed over by main.ts (detection's rule-error list).
import type Router from '@koa/router'
import type { TokenStore } from '../auth/token-store.js'
import { badRequest, notFound } from '../errors.js'
import { requirePermission } from './auth.js'
import type { ApiState } from './context.js'
import {
  decodeCursor,
  encodeCursor,
  listParam,
  nonEmpty,
  parseLimit,
  type Query,
  rejectUnknownParams,
  timeParam,
  tuple,
} from './query.js'

interface Filter {
  ruleIds?: readonly string[]
  since?: string
  limit: number
}

/** What the routes need of detection (detect/rule-error-list.ts). */
export interface RuleErrorSource {
  list(f: Filter & { before?: number }): { results: unknown[]; next: number | null }
  groups(f: Filter & { after?: { lastTime: string; key: string } }): {
    results: unknown[]
    next: { lastTime: string; key: string } | null
  }
  /** The stored record at a location a rule error names; null when none names it. */
  record(partition: string, offset: number): Promise<unknown>
}

const FILTERS = ['rule-id', 'since', 'cursor', 'limit']

function filterOf(q: Query): Filter {
  return { ruleIds: listParam(q, 'rule-id'), since: timeParam(q, 'since'), limit: parseLimit(nonEmpty(q, 'limit')) }
}

export function addRuleErrorRoutes(router: Router<ApiState>, deps: { tokens: TokenStore; errors: RuleErrorSource }) {
  const view = requirePermission(deps.tokens, 'View Alerts')
  const { errors } = deps

  router.get('/rule-errors', view, (ctx) => {
    const q = ctx.query as Query
    rejectUnknownParams(q, FILTERS)
    const cursor = nonEmpty(q, 'cursor')
    const before = cursor === undefined ? undefined : decodeCursor(cursor, tuple<[number]>('n'))[0]
    const page = errors.list({ ...filterOf(q), before })
    ctx.body = { results: page.results, next: page.next === null ? null : encodeCursor([page.next]) }
  })

  router.get('/rule-errors/groups', view, (ctx) => {
    const q = ctx.query as Query
    rejectUnknownParams(q, FILTERS)
    const cursor = nonEmpty(q, 'cursor')
    const c = cursor === undefined ? undefined : decodeCursor(cursor, tuple<[string, string]>('s', 's'))
    const page = errors.groups({ ...filterOf(q), after: c && { lastTime: c[0], key: c[1] } })
    ctx.body = { results: page.results, next: page.next && encodeCursor([page.next.lastTime, page.next.key]) }
  })

  router.get('/rule-errors/record', view, async (ctx) => {
    const q = ctx.query as Query
    rejectUnknownParams(q, ['partition', 'offset'])
    const partition = nonEmpty(q, 'partition')
    const offset = nonEmpty(q, 'offset')
    if (partition === undefined || offset === undefined)
      throw badRequest('partition and offset are required: the `record` of a rule error')
    if (!/^\d{1,15}$/.test(offset)) throw badRequest('offset must be a non-negative integer')
    const record = await errors.record(partition, Number(offset))
    if (record === null) throw notFound('no rule error names a stored record at this partition and offset')
    ctx.body = record
  })
}
