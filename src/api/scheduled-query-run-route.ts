// POST /scheduled-queries/{name}/run (Manage Rules): runs one scheduled (or saved) query now, its
// rows through the enabled scheduled rules naming it, and answers what the run did (rows, matches,
// alerts created and updated, rule errors, duration, error). Served by the query scheduler
// (query/query-scheduler.ts), handed over by main.ts; the scheduler throws the 404/409/503.
import type Router from '@koa/router'
import type { TokenStore } from '../auth/token-store.js'
import { requirePermission } from './auth.js'
import type { ApiState } from './context.js'
import { optionalJsonBody } from './json-body.js'
import { rejectUnknownParams } from './query.js'

/** What the route needs of the scheduler (`runNow`). */
export interface ScheduledQueryRuns {
  runNow(name: string): Promise<unknown>
}

export function addScheduledQueryRunRoute(
  router: Router<ApiState>,
  deps: { tokens: TokenStore; runs: ScheduledQueryRuns; maxBodyBytes: number },
): void {
  router.post(
    '/scheduled-queries/:name/run',
    requirePermission(deps.tokens, 'Manage Rules'),
    optionalJsonBody(deps.maxBodyBytes),
    async (ctx) => {
      rejectUnknownParams(ctx.query, [])
      ctx.body = await deps.runs.runNow(ctx.params.name as string)
    },
  )
}
