// The alert API of alerts.md §3: GET /alerts (filters, cursor pages), GET /alerts/{id},
// GET /alerts/{id}/events (the matched records as stored), and the triage writes: PATCH /alerts/{id}
// (status, assignee), POST /alerts/{id}/comments and POST /alerts/status (one status for many), with
// the View/Manage Alerts permissions. Served from an AlertSource handed over by main.ts (detection's
// alert reads, detect/alert-reads.ts); the bodies are checked in alert-triage-body.ts.
import { randomUUID } from 'node:crypto'
import type Router from '@koa/router'
import type { TokenStore } from '../auth/token-store.js'
import { STATUSES } from '../detect/alert-status.js'
import type { TriageActor, TriageChange } from '../detect/alert-triage.js'
import { badRequest, notFound } from '../errors.js'
import { SEVERITIES } from '../rules/model.js'
import { bulkStatusBody, commentBody, patchBody } from './alert-triage-body.js'
import { requirePermission } from './auth.js'
import type { ApiState } from './context.js'
import { readJsonBody } from './json-body.js'
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

type Position = { createdAt: string; id: string }

/** What the routes need of detection (detect/alert-reads.ts). */
export interface AlertSource {
  /** A page of alert views, newest first; `next` is the last alert of the page when more follow. */
  query(q: {
    ruleIds?: string[]
    severities?: string[]
    statuses?: string[]
    createdAfter?: string
    createdBefore?: string
    after?: Position
    limit: number
  }): Promise<{ results: unknown[]; next: Position | null }>
  /** Whether an alert has this id. */
  has(id: string): boolean | Promise<boolean>
  /** The alert's view; null when no alert has this id. */
  get(id: string): Promise<unknown | null>
  /** The alert's matched records `[skip, skip + limit)` and how many there are; null when no alert. */
  events(id: string, skip: number, limit: number): Promise<{ results: unknown[]; total: number } | null>
  /** Applies a triage change (status, assignee, a comment); the alert's view after, or null when no alert has this id. */
  change(id: string, change: TriageChange): Promise<unknown | null>
  /** The same change of several alerts in one commit; per id whether it was an alert. */
  changeMany(ids: readonly string[], change: TriageChange): Promise<boolean[]>
}

const noAlert = (id: string) => notFound(`no alert ${JSON.stringify(id.slice(0, 100))}`)

export function addAlertRoutes(
  router: Router<ApiState>,
  deps: { tokens: TokenStore; alerts: AlertSource; maxBodyBytes: number },
): void {
  const view = requirePermission(deps.tokens, 'View Alerts')
  const manage = requirePermission(deps.tokens, 'Manage Alerts')
  const { alerts } = deps

  router.get('/alerts', view, async (ctx) => {
    const q = ctx.query as Query
    rejectUnknownParams(q, ['rule-id', 'severity', 'status', 'created-after', 'created-before', 'cursor', 'limit'])
    const severities = listParam(q, 'severity')?.map((s) => s.toUpperCase())
    const badSev = severities?.filter((s) => !(SEVERITIES as readonly string[]).includes(s)) ?? []
    if (badSev.length) throw badRequest(`severity must be among ${SEVERITIES.join(', ')}`)
    const statuses = listParam(q, 'status')?.map((s) => s.toUpperCase())
    if (statuses?.some((s) => !(STATUSES as readonly string[]).includes(s)))
      throw badRequest(`status must be among ${STATUSES.join(', ')}`)
    const cursor = nonEmpty(q, 'cursor')
    const after = cursor ? decodeCursor(cursor, tuple<[string, string]>('s', 's')) : undefined
    const page = await alerts.query({
      ruleIds: listParam(q, 'rule-id'),
      severities,
      statuses,
      createdAfter: timeParam(q, 'created-after'),
      createdBefore: timeParam(q, 'created-before'),
      after: after && { createdAt: after[0], id: after[1] },
      limit: parseLimit(nonEmpty(q, 'limit')),
    })
    ctx.body = {
      results: page.results,
      next: page.next ? encodeCursor([page.next.createdAt, page.next.id]) : null,
    }
  })

  router.get('/alerts/:id', view, async (ctx) => {
    const id = ctx.params.id as string
    const alert = await alerts.get(id)
    if (alert === null) throw noAlert(id)
    ctx.body = alert
  })

  router.get('/alerts/:id/events', view, async (ctx) => {
    const q = ctx.query as Query
    rejectUnknownParams(q, ['cursor', 'limit'])
    const id = ctx.params.id as string
    if (!(await alerts.has(id))) throw noAlert(id)
    const limit = parseLimit(nonEmpty(q, 'limit'))
    const cursor = nonEmpty(q, 'cursor')
    const skip = cursor ? decodeCursor(cursor, tuple<[number]>('n'))[0] : 0
    const page = await alerts.events(id, skip, limit)
    if (page === null) throw noAlert(id)
    ctx.body = { results: page.results, next: skip + limit < page.total ? encodeCursor([skip + limit]) : null }
  })

  const actorOf = (state: ApiState): TriageActor => ({
    id: state.token!.id,
    type: 'api-token',
    name: state.token!.name,
  })

  router.patch('/alerts/:id', manage, readJsonBody(deps.maxBodyBytes), async (ctx) => {
    const id = ctx.params.id as string
    if (!(await alerts.has(id))) throw noAlert(id)
    const after = await alerts.change(id, { ...patchBody(ctx.state.body), actor: actorOf(ctx.state) })
    if (after === null) throw noAlert(id)
    ctx.body = after
  })

  router.post('/alerts/:id/comments', manage, readJsonBody(deps.maxBodyBytes), async (ctx) => {
    const id = ctx.params.id as string
    if (!(await alerts.has(id))) throw noAlert(id)
    const comment = { id: randomUUID(), text: commentBody(ctx.state.body) }
    const after = (await alerts.change(id, { comment, actor: actorOf(ctx.state) })) as {
      comments?: Array<{ id: string }>
    } | null
    if (after === null) throw noAlert(id)
    ctx.status = 201
    ctx.body = after.comments?.find((c) => c.id === comment.id)
  })

  router.post('/alerts/status', manage, readJsonBody(deps.maxBodyBytes), async (ctx) => {
    const { ids, status } = bulkStatusBody(ctx.state.body)
    const found = await alerts.changeMany(ids, { status, actor: actorOf(ctx.state) })
    ctx.body = { results: ids.map((id, i) => ({ id, outcome: found[i] ? 'updated' : 'not-found' })) }
  })
}
