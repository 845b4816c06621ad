// POST /correlation-rules/{id}/run (Manage Rules): evaluates one correlation rule now over its
// lookback window and answers what the run did (window, signals counted, alerts created and
// updated, duration, error). Served by detection's correlation scheduler, handed over by main.ts;
// 501 on a backend without correlation rules, like the kind's other routes.
import type Router from '@koa/router'
import type { TokenStore } from '../auth/token-store.js'
import { notImplemented } from '../errors.js'
import { kindDef } from '../rules/kinds/index.js'
import { requirePermission } from './auth.js'
import type { ApiState } from './context.js'
import { optionalJsonBody } from './json-body.js'
import { rejectUnknownParams } from './query.js'

/** What the route needs of detection (detect/correlation-schedule.ts `runNow`); it throws the 404/409/503. */
export interface CorrelationRuns {
  runNow(ruleId: string): Promise<unknown>
}

export function addCorrelationRunRoute(
  router: Router<ApiState>,
  deps: { tokens: TokenStore; runs: CorrelationRuns; backend: 'snowflake' | 'databricks'; maxBodyBytes: number },
): void {
  const def = kindDef('correlation')
  router.post(
    `/${def.apiPath}/:id/run`,
    requirePermission(deps.tokens, 'Manage Rules'),
    optionalJsonBody(deps.maxBodyBytes),
    async (ctx) => {
      if (def.unavailableOn.includes(deps.backend))
        throw notImplemented(`correlation rules are not available on the ${deps.backend} backend`)
      rejectUnknownParams(ctx.query, [])
      ctx.body = await deps.runs.runNow(ctx.params.id as string)
    },
  )
}
