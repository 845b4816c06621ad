// POST /plans (Manage Rules: it runs rule code and replays stored events) `{ base, head, backtestDays? }`
// makes a plan of the change from one revision to another (plans/make-plan.ts) and answers it, 201
// with its Location; GET /plans/{id} (View Rules) reads it again. The backtest's alert samples are
// View Alerts' (as replay's alert content is): without it they are left out of the answer.
import type Router from '@koa/router'
import type { TokenStore } from '../auth/token-store.js'
import { notFound, validationFailed } from '../errors.js'
import { isPlainObject } from '../is-plain-object.js'
import { isRevisionName } from '../git/repository.js'
import type { Plan } from '../plans/plan.js'
import { requirePermission, tokenHas } from './auth.js'
import type { ApiState } from './context.js'
import { readJsonBody } from './json-body.js'
import { rejectUnknownParams } from './query.js'

/** What the routes need of the plans (main.ts builds it over plans/). */
export interface Plans {
  /** The most days a backtest may replay, and the default. */
  maxBacktestDays: number
  defaultBacktestDays: number
  /** Makes and stores a plan; a base or head the repository lacks is a 400 from here. */
  make(req: { base: string; head: string; backtestDays: number; signal: AbortSignal }): Promise<Plan>
  get(id: string): Promise<Plan | null>
}

/** The plan as this token may read it (samples only with View Alerts). */
function visible(plan: Plan, alerts: boolean): Plan {
  if (alerts) return plan
  return {
    ...plan,
    backtest: { ...plan.backtest, rules: plan.backtest.rules.map((r) => ({ ...r, samples: { base: [], head: [] } })) },
  }
}

export function addPlanRoutes(
  router: Router<ApiState>,
  deps: { tokens: TokenStore; plans: Plans; maxBodyBytes: number },
): void {
  const { plans } = deps
  router.post(
    '/plans',
    requirePermission(deps.tokens, 'Manage Rules'),
    readJsonBody(deps.maxBodyBytes),
    async (ctx) => {
      rejectUnknownParams(ctx.query, [])
      const body = ctx.state.body
      const errors: Array<{ path: string; message: string }> = []
      if (!isPlainObject(body)) throw validationFailed([{ path: '', message: 'the body must be a JSON object' }])
      for (const k of Object.keys(body))
        if (!['base', 'head', 'backtestDays'].includes(k))
          errors.push({ path: `/${k}`, message: `${k} is not a field of a plan request` })
      for (const k of ['base', 'head'] as const)
        if (typeof body[k] !== 'string' || !isRevisionName(body[k] as string))
          errors.push({ path: `/${k}`, message: `${k} must be a commit id or a branch name` })
      const days = body.backtestDays ?? plans.defaultBacktestDays
      if (typeof days !== 'number' || !Number.isInteger(days) || days < 0 || days > plans.maxBacktestDays)
        errors.push({
          path: '/backtestDays',
          message: `backtestDays must be a whole number from 0 to ${plans.maxBacktestDays}`,
        })
      if (errors.length) throw validationFailed(errors)
      const aborted = new AbortController()
      ctx.req.once('close', () => {
        if (!ctx.res.writableEnded) aborted.abort(new Error('the client went away'))
      })
      const plan = await plans.make({
        base: body.base as string,
        head: body.head as string,
        backtestDays: days as number,
        signal: aborted.signal,
      })
      ctx.status = 201
      ctx.set('Location', `${ctx.path.replace(/\/$/, '')}/${plan.id}`)
      ctx.body = visible(plan, tokenHas(ctx, 'View Alerts'))
    },
  )

  router.get('/plans/:id', requirePermission(deps.tokens, 'View Rules'), async (ctx) => {
    rejectUnknownParams(ctx.query, [])
    const plan = await plans.get(ctx.params.id as string)
    if (!plan) throw notFound(`no plan ${ctx.params.id}`)
    ctx.body = visible(plan, tokenHas(ctx, 'View Alerts'))
  })
}
