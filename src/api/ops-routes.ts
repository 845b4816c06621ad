// Operational routes: /healthz and /metrics (no auth, always at the root), /openapi.json (no auth,
// under the base path), /status, its paged invalid files (invalid-files-route.ts) and /reconcile
// (auth), and the push webhook /hooks/git (git-webhook.ts).
import type Router from '@koa/router'
import type { TokenStore } from '../auth/token-store.js'
import type { Registry } from '../metrics.js'
import { requirePermission } from './auth.js'
import type { ApiState } from './context.js'
import { addGitWebhook } from './git-webhook.js'
import type { PullRequestEvent } from '../plans/pull-request-event.js'
import {
  addInvalidFilesRoute,
  type InvalidFileSource,
  type StatusAnswer,
  withInvalidFilesNext,
} from './invalid-files-route.js'
import { openApiDocument } from './openapi.js'
import { booleanParam, rejectUnknownParams } from './query.js'

export interface StatusSource extends InvalidFileSource {
  status(): StatusAnswer
  reconcile(opts: { allowMassDelete: boolean }): Promise<StatusAnswer>
}

export function addRootRoutes(
  router: Router<ApiState>,
  deps: {
    metrics: Registry
    webhookSecret?: string
    status: StatusSource
    pullRequest?: (ev: PullRequestEvent) => string
  },
): void {
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' }
  })
  router.get('/metrics', async (ctx) => {
    ctx.type = deps.metrics.contentType
    ctx.body = await deps.metrics.metrics()
  })
  addGitWebhook(router, {
    secret: deps.webhookSecret,
    reconcile: () => void deps.status.reconcile({ allowMassDelete: false }).catch(() => {}),
    pullRequest: deps.pullRequest,
  })
}

export function addBaseRoutes(
  router: Router<ApiState>,
  deps: { tokens: TokenStore; basePath: string; status: StatusSource },
): void {
  const doc = JSON.stringify(openApiDocument(deps.basePath))
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json'
    ctx.body = doc
  })
  router.get('/status', requirePermission(deps.tokens, 'View Rules'), (ctx) => {
    ctx.body = withInvalidFilesNext(deps.status.status())
  })
  addInvalidFilesRoute(router, deps.tokens, deps.status)
  router.post('/reconcile', requirePermission(deps.tokens, 'Manage Rules'), async (ctx) => {
    rejectUnknownParams(ctx.query, ['allow-mass-delete'])
    ctx.body = withInvalidFilesNext(
      await deps.status.reconcile({ allowMassDelete: booleanParam(ctx.query, 'allow-mass-delete', false) }),
    )
  })
}
