// `POST /alerts/{id}/deliveries/retry` (alerts.md §4, Manage Alerts): queues the alert's failed
// deliveries again and answers 202 with the alert. Served by destinations (`retryDeliveries`),
// handed over by main.ts. No body is needed; one that is sent is read and ignored.
import type Router from '@koa/router'
import type { TokenStore } from '../auth/token-store.js'
import { notFound } from '../errors.js'
import { requirePermission } from './auth.js'
import type { ApiState } from './context.js'
import { optionalJsonBody } from './json-body.js'

/** What the route needs of destinations (destinations/index.ts). */
export interface Redeliveries {
  /** Queues the alert's failed deliveries again; the alert's view, or null when no alert has this id. */
  retryDeliveries(alertId: string): Promise<unknown | null>
}

export function addRedeliveryRoute(
  router: Router<ApiState>,
  deps: { tokens: TokenStore; redeliveries: Redeliveries; maxBodyBytes: number },
): void {
  router.post(
    '/alerts/:id/deliveries/retry',
    requirePermission(deps.tokens, 'Manage Alerts'),
    optionalJsonBody(deps.maxBodyBytes),
    async (ctx) => {
      const id = ctx.params.id as string
      const alert = await deps.redeliveries.retryDeliveries(id)
      if (alert === null) throw notFound(`no alert ${JSON.stringify(id.slice(0, 100))}`)
      ctx.status = 202
      ctx.body = alert
    },
  )
}
