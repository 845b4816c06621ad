// The Koa application: request id, observability and the error funnel around two routers — the
// root one (/healthz, /metrics, /hooks/git, log sources) and the one under `api.basePath` (rules,
// /status, /reconcile, /openapi.json). Built from its parts; listens nowhere (main.ts does).
import Koa from 'koa'
import Router from '@koa/router'
import type { TokenStore } from '../auth/token-store.js'
import type { Logger } from '../log.js'
import type { Registry } from '../metrics.js'
import { RULE_KINDS } from '../rules/model.js'
import type { IndexedRule } from '../rules/rule-index.js'
import type { RuleStore } from '../service/rule-store.js'
import type { ApiState } from './context.js'
import { errorFunnel } from './error-funnel.js'
import { observe } from './observe.js'
import { addBaseRoutes, addRootRoutes, type StatusSource } from './ops-routes.js'
import { requestId } from './request-id.js'
import type { RuleLimits } from './rule-limits.js'
import { addRuleRoutes } from './rule-routes.js'

export interface AppDeps {
  store: RuleStore
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
  /** Wall clock for all the unit tests of one request (default 120 s). */
  testBudgetMs?: number
  /** Routers mounted at the root as they are (the HTTP log sources). */
  rootRouters?: Array<Router<any, any>>
}

export function normalizeBasePath(p: string): string {
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
  addRootRoutes(root, { metrics: deps.metrics, webhookSecret: deps.webhookSecret, status: deps.status })
  const prefix = normalizeBasePath(deps.basePath)
  const api = new Router<ApiState>(prefix ? { prefix } : {})
  addBaseRoutes(api, { tokens: deps.tokens, basePath: deps.basePath, status: deps.status })
  for (const kind of RULE_KINDS) {
    addRuleRoutes(api, kind, { store: deps.store, tokens: deps.tokens, maxBodyBytes: deps.maxBodyBytes, ruleLimits: deps.ruleLimits, backend: deps.backend, pythonFor: deps.pythonFor, testBudgetMs: deps.testBudgetMs })
  }
  // The rules router first: it carries nearly all traffic, and the routers' paths never overlap.
  app.use(api.routes())
  app.use(root.routes())
  for (const r of deps.rootRouters ?? []) app.use(r.routes())
  app.use(api.allowedMethods({ throw: false }))
  return app
}
