// The alert API of alerts.md §3: GET /alerts (filters, cursor pages), GET /alerts/{id},
// GET /alerts/{id}/events (the matched records as stored) and PATCH /alerts/{id} (status only).
// Mounted under api.basePath with the View/Manage Alerts permissions (rule errors: api/rule-error-routes.ts).
import type Router from '@koa/router'
import { requirePermission } from '../api/auth.js'
import type { ApiState } from '../api/context.js'
import { readJsonBody } from '../api/json-body.js'
import { rejectUnknownParams } from '../api/query.js'
import type { TokenStore } from '../auth/token-store.js'
import { decodeCursor, encodeCursor, list, parseLimit, parseTime, type Query, single } from '../api/paging.js'
import { badRequest, notFound, validationFailed } from '../errors.js'
import { isPlainObject } from '../is-plain-object.js'
import { SEVERITIES } from '../rules/model.js'
import type { AlertAccess } from './alert-book.js'
import { readStoredLines } from './stored-log.js'
import { alertView, STATUSES, type AlertStatus } from './grouping.js'

export function addAlertRoutes(
  router: Router<ApiState>,
  deps: { tokens: TokenStore; alerts: AlertAccess; logsRoot: string; maxBodyBytes: number },
): void {
  const view = requirePermission(deps.tokens, 'View Alerts')
  const manage = requirePermission(deps.tokens, 'Manage Alerts')
  const { alerts } = deps

  router.get('/alerts', view, (ctx) => {
    const q = ctx.query as Query
    rejectUnknownParams(q, ['rule-id', 'severity', 'status', 'created-after', 'created-before', 'cursor', 'limit'])
    const severities = list(q, 'severity')?.map((s) => s.toUpperCase())
    const badSev = severities?.filter((s) => !(SEVERITIES as readonly string[]).includes(s)) ?? []
    if (badSev.length) throw badRequest(`severity must be among ${SEVERITIES.join(', ')}`)
    const statuses = list(q, 'status')?.map((s) => s.toUpperCase())
    if (statuses?.some((s) => !(STATUSES as readonly string[]).includes(s)))
      throw badRequest(`status must be among ${STATUSES.join(', ')}`)
    const cursor = single(q, 'cursor')
    const after = cursor ? decodeCursor<[string, string]>(cursor, ['s', 's']) : undefined
    const page = alerts.query({
      ruleIds: list(q, 'rule-id'),
      severities,
      statuses,
      createdAfter: parseTime(q, 'created-after'),
      createdBefore: parseTime(q, 'created-before'),
      after: after && { createdAt: after[0], id: after[1] },
      limit: parseLimit(q),
    })
    ctx.body = {
      results: page.results.map(alertView),
      next: page.next ? encodeCursor([page.next.createdAt, page.next.id]) : null,
    }
  })

  const alertOf = (id: string) => {
    const g = alerts.alert(id)
    if (!g) throw notFound(`no alert ${JSON.stringify(id.slice(0, 100))}`)
    return g
  }

  router.get('/alerts/:id', view, (ctx) => {
    ctx.body = alertView(alertOf(ctx.params.id as string))
  })

  router.get('/alerts/:id/events', view, async (ctx) => {
    const q = ctx.query as Query
    rejectUnknownParams(q, ['cursor', 'limit'])
    const g = alertOf(ctx.params.id as string)
    const limit = parseLimit(q)
    const cursor = single(q, 'cursor')
    const skip = cursor ? decodeCursor<[number]>(cursor, ['n'])[0] : 0
    // The matches of the group lie in the event-hour partitions of its first to last event.
    const locations = await alerts.eventLocations(g)
    const results = await readStoredLines(deps.logsRoot, locations.slice(skip, skip + limit))
    ctx.body = { results, next: skip + limit < locations.length ? encodeCursor([skip + limit]) : null }
  })

  router.patch('/alerts/:id', manage, readJsonBody(deps.maxBodyBytes), async (ctx) => {
    const body = ctx.state.body
    if (!isPlainObject(body)) throw badRequest('the body must be a JSON object: { "status": … }')
    const errors: Array<{ path: string; message: string }> = []
    for (const k of Object.keys(body))
      if (k !== 'status') errors.push({ path: `/${k}`, message: `${k} is not writable; only status is` })
    if (!Object.hasOwn(body, 'status')) errors.push({ path: '/status', message: 'status is required' })
    else if (!(STATUSES as readonly unknown[]).includes(body.status))
      errors.push({ path: '/status', message: `status must be one of ${STATUSES.join(', ')}` })
    alertOf(ctx.params.id as string)
    if (errors.length) throw validationFailed(errors)
    const g = await alerts.setStatus(ctx.params.id as string, body.status as AlertStatus)
    if (!g) throw notFound(`no alert ${JSON.stringify(String(ctx.params.id).slice(0, 100))}`)
    ctx.body = alertView(g)
  })
}
