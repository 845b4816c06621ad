// The Koa application: request id, observability and the error funnel around two routers — the
// root one (/healthz, /metrics, /hooks/git, log sources) and the one under `api.basePath` (rules,
// /status, /reconcile, /whoami, /kinds, /log-types, /openapi.json, alerts, replay, rule errors,
// redelivery, queries, scheduled-query runs) — and the console's static files at `/` (console-route.ts). Every route is in api/,
// over the narrow interfaces main.ts hands over (the features implement them); listens nowhere.
import Koa from 'koa'
import Router from '@koa/router'
import type { TokenStore } from '../auth/token-store.js'
import type { Logger } from '../log.js'
import type { Registry } from '../metrics.js'
import { RULE_KINDS } from '../rules/kinds/index.js'
import type { IndexedRule } from '../rules/rule-index.js'
import type { EngineRegistry } from '../engine/engine.js'
import type { RuleCatalog } from '../service/catalog.js'
import type { RuleHistoryReads } from '../service/rule-history.js'
import type { RuleWriter } from '../service/rule-writer.js'
import type { ApiState } from './context.js'
import { errorFunnel } from './error-funnel.js'
import { observe } from './observe.js'
import { addBaseRoutes, addRootRoutes, type StatusSource } from './ops-routes.js'
import { consoleRoute } from './console-route.js'
import { requestId } from './request-id.js'
import type { RuleLimits } from './rule-limits.js'
import { addAlertRoutes, type AlertSource } from './alert-routes.js'
import { addCorrelationRunRoute, type CorrelationRuns } from './correlation-run-route.js'
import { addRedeliveryRoute, type Redeliveries } from './redelivery-route.js'
import { addReplayRoute, type Replays } from './replay-route.js'
import { addPreviewRoute } from './preview-route.js'
import { addTestRunRoute } from './test-run-route.js'
import { addRuleErrorRoutes, type RuleErrorSource } from './rule-error-routes.js'
import { addRuleHealthRoute, type RuleHealthSource } from './rule-health-route.js'
import { addRuleRoutes, type RuleRoutesDeps } from './rule-routes.js'
import { addWhoamiRoute } from './whoami-route.js'
import { addQueryRoute, type QueryRunner } from './query-route.js'
import { addPlanRoutes, type Plans } from './plan-routes.js'
import type { PullRequestEvent } from '../plans/pull-request-event.js'
import { addScheduledQueryRunRoute, type ScheduledQueryRuns } from './scheduled-query-run-route.js'
import { addKindsRoute } from './kinds-route.js'
import { addLogTypesRoute, type LogTypeSource } from './log-types-route.js'

export interface AppDeps {
  /** What reads are served from (the published index and its history metadata). */
  catalog: Pick<RuleCatalog, 'index' | 'history'>
  engines: EngineRegistry
  /** Where writes are queued. */
  writer: Pick<RuleWriter, 'submit'>
  /** Rule history and ETags. */
  reads: RuleHistoryReads
  tokens: TokenStore
  logger: Logger
  metrics: Registry
  status: StatusSource
  basePath: string
  maxBodyBytes: number
  ruleLimits: RuleLimits
  backend: 'snowflake' | 'databricks'
  webhookSecret?: string
  pythonFor?: (rule: IndexedRule) => string | undefined
  /** Deployment-dependent warnings of a rule's representation (unknown OutputIds). */
  ruleWarnings?: RuleRoutesDeps['ruleWarnings']
  /** Wall clock for all the unit tests of one request (default 120 s). */
  testBudgetMs?: number
  /** Routers mounted at the root as they are (the HTTP log sources). */
  // biome-ignore lint/suspicious/noExplicitAny: each log source's router has its own state and context types
  rootRouters?: Array<Router<any, any>>
  /** Detection's rule errors (GET /rule-errors, /rule-errors/groups, /rule-errors/record). */
  ruleErrors?: RuleErrorSource
  /** Per-rule health for the console's list (GET /rule-health). */
  ruleHealth?: RuleHealthSource
  /** Runs a correlation rule now (POST /correlation-rules/{id}/run). */
  correlationRuns?: CorrelationRuns
  /** Detection's alerts (GET /alerts, /alerts/{id}, /alerts/{id}/events, PATCH /alerts/{id}). */
  alerts?: AlertSource
  /** Detection's replay runs (POST /replay). */
  replays?: Replays
  /** Destinations' redelivery (POST /alerts/{id}/deliveries/retry). */
  redeliveries?: Redeliveries
  /** The log types ingested (GET /log-types). */
  logTypes: LogTypeSource
  /** The query engine over the stored events (POST /queries). */
  queries?: QueryRunner
  /** Runs a scheduled query now (POST /scheduled-queries/{name}/run). */
  scheduledQueryRuns?: ScheduledQueryRuns
  /** Plans of a change (POST /plans, GET /plans/{id}). */
  plans?: Plans
  /** Pull-request checks: a forge's pull-request event on /hooks/git is planned and reported. */
  pullRequests?: { accept(ev: PullRequestEvent): string }
}

function normalizeBasePath(p: string): string {
  const trimmed = p.replace(/\/+$/, '')
  return trimmed === '' ? '' : trimmed.startsWith('/') ? trimmed : `/${trimmed}`
}

export function createApp(deps: AppDeps): Koa<ApiState> {
  const app = new Koa<ApiState>({ proxy: false })
  app.silent = true
  app.use(requestId())
  app.use(observe(deps.logger, deps.metrics))
  app.use(errorFunnel(deps.logger))

  const root = new Router<ApiState>()
  addRootRoutes(root, {
    metrics: deps.metrics,
    webhookSecret: deps.webhookSecret,
    status: deps.status,
    pullRequest: deps.pullRequests ? (ev) => deps.pullRequests!.accept(ev) : undefined,
  })
  const prefix = normalizeBasePath(deps.basePath)
  const api = new Router<ApiState>(prefix ? { prefix } : {})
  addBaseRoutes(api, { tokens: deps.tokens, basePath: deps.basePath, status: deps.status })
  addWhoamiRoute(api, deps.tokens)
  addKindsRoute(api, deps.tokens)
  addLogTypesRoute(api, deps.tokens, deps.logTypes)
  for (const kind of RULE_KINDS) {
    addRuleRoutes(api, kind, {
      catalog: deps.catalog,
      engines: deps.engines,
      writer: deps.writer,
      reads: deps.reads,
      tokens: deps.tokens,
      maxBodyBytes: deps.maxBodyBytes,
      ruleLimits: deps.ruleLimits,
      backend: deps.backend,
      pythonFor: deps.pythonFor,
      ruleWarnings: deps.ruleWarnings,
      testBudgetMs: deps.testBudgetMs,
    })
  }
  if (deps.ruleErrors) addRuleErrorRoutes(api, { tokens: deps.tokens, errors: deps.ruleErrors })
  if (deps.ruleHealth) addRuleHealthRoute(api, { tokens: deps.tokens, health: deps.ruleHealth })
  if (deps.correlationRuns)
    addCorrelationRunRoute(api, {
      tokens: deps.tokens,
      runs: deps.correlationRuns,
      backend: deps.backend,
      maxBodyBytes: deps.maxBodyBytes,
    })
  const { tokens, maxBodyBytes } = deps
  if (deps.alerts) addAlertRoutes(api, { tokens, alerts: deps.alerts, maxBodyBytes })
  if (deps.replays) addReplayRoute(api, { tokens, replays: deps.replays, maxBodyBytes })
  // An unsaved rule's preview over stored events and its tests one by one (the console's rule page).
  const unsaved = {
    tokens,
    maxBodyBytes,
    catalog: deps.catalog,
    engines: deps.engines,
    ruleLimits: deps.ruleLimits,
    testBudgetMs: deps.testBudgetMs ?? 120_000,
  }
  if (deps.replays) addPreviewRoute(api, { ...unsaved, replays: deps.replays })
  addTestRunRoute(api, unsaved)
  if (deps.redeliveries) addRedeliveryRoute(api, { tokens, redeliveries: deps.redeliveries, maxBodyBytes })
  if (deps.queries) addQueryRoute(api, { tokens, queries: deps.queries, maxBodyBytes })
  if (deps.scheduledQueryRuns) addScheduledQueryRunRoute(api, { tokens, runs: deps.scheduledQueryRuns, maxBodyBytes })
  if (deps.plans) addPlanRoutes(api, { tokens, plans: deps.plans, maxBodyBytes })
  // The rules router first: it carries nearly all traffic, and the routers' paths never overlap.
  const byId = getByIdFastPath(api)
  if (byId) app.use(byId)
  app.use(api.routes())
  app.use(root.routes())
  app.use(consoleRoute(prefix))
  for (const r of deps.rootRouters ?? []) app.use(r.routes())
  app.use(api.allowedMethods({ throw: false }))
  return app
}

interface RouterLayer {
  path: string
  name?: string
  methods: string[]
  // biome-ignore lint/suspicious/noExplicitAny: @koa/router's layer stack is untyped in its declarations
  stack: Array<Koa.Middleware<any>>
  paramNames: Array<{ name: string }>
}

/**
 * GET/HEAD `<base>/<kind>/<id>` without going through the router's per-request work (a regexp test
 * of every route, arrays of matches, a composition of the chain): the router's own layer for the
 * route is looked up by its literal base once, here, and its middleware chain is run as the router
 * would run it, with the same context fields (params, _matchedRoute for the metrics, …). Only for
 * paths whose answer cannot differ: the exact-case base, a non-empty id without `%` (so decoding is
 * the identity) and no trailing slash; every other path (and every other method) goes to the
 * router. A route the check at start-up cannot prove to be the only match keeps the router.
 */
function getByIdFastPath(api: Router<ApiState>): Koa.Middleware<ApiState> | null {
  const stack = (api as unknown as { stack: RouterLayer[] }).stack
  const match = (path: string, method: string) =>
    (
      api as unknown as {
        match(p: string, m: string): { path: RouterLayer[]; pathAndMethod: RouterLayer[]; route: boolean }
      }
    ).match(path, method)
  const routes = new Map<
    string,
    {
      layer: RouterLayer
      matched: RouterLayer[]
      run: (ctx: Koa.ParameterizedContext<ApiState>, next: Koa.Next) => Promise<void>
    }
  >()
  for (const layer of stack) {
    if (!layer.methods.includes('GET') || !layer.path.endsWith('/:id')) continue
    const base = layer.path.slice(0, -'/:id'.length)
    if (!/^[A-Za-z0-9/._-]*$/.test(base) || layer.paramNames.length !== 1) continue
    const sample = `${base}/Sample.Rule-1_x`
    const ok = ['GET', 'HEAD'].every((m) => {
      const r = match(sample, m)
      return r.route && r.pathAndMethod.length === 1 && r.pathAndMethod[0] === layer
    })
    // The chain composed once: each step calls the next one (the last calls the router's `next`).
    type Step = (ctx: Koa.ParameterizedContext<ApiState>, next: Koa.Next) => Promise<void>
    if (!ok) continue
    const run = layer.stack.reduceRight<Step>(
      (rest, mw) => (ctx, next) => Promise.resolve(mw(ctx, () => rest(ctx, next))),
      (_ctx, next) => next(),
    )
    routes.set(base, { layer, matched: match(sample, 'GET').path, run })
  }
  if (routes.size === 0) return null
  return function getRuleById(ctx, next) {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next()
    const path = ctx.path
    const slash = path.lastIndexOf('/')
    const route = slash > 0 ? routes.get(path.slice(0, slash)) : undefined
    const id = path.slice(slash + 1)
    if (!route || id === '' || id.includes('%')) return next()
    const { layer, matched, run } = route
    // biome-ignore lint/suspicious/noExplicitAny: sets @koa/router's own (undeclared) match fields, as its dispatch does
    const c = ctx as any
    c.matched = matched
    c.router = api
    c.routeMatched = true
    c.captures = [id]
    c.params = c.request.params = { id }
    c.routerPath = layer.path
    c.routerName = layer.name || undefined
    c._matchedRoute = layer.path
    if (layer.name) c._matchedRouteName = layer.name
    return run(ctx, next)
  }
}
