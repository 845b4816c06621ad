// Operational routes: /healthz and /metrics (no auth, always at the root), /openapi.json (no auth,
// under the base path), /status and /reconcile (auth), and the push webhook /hooks/git (HMAC or
// GitLab token; 404 when no secret is configured).
import { createHmac, timingSafeEqual } from 'node:crypto'
import type Router from '@koa/router'
import { RulekeeperError } from '../errors.js'
import type { TokenStore } from '../auth/token-store.js'
import type { Registry } from '../metrics.js'
import { requirePermission } from './auth.js'
import type { ApiState } from './context.js'
import { openApiDocument } from './openapi.js'
import { booleanParam, rejectUnknownParams } from './query.js'

export interface StatusSource {
  status(): unknown
  reconcile(opts: { allowMassDelete: boolean }): Promise<unknown>
}

export function addRootRoutes(router: Router<ApiState>, deps: { metrics: Registry; webhookSecret?: string; status: StatusSource }): void {
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' }
  })
  router.get('/metrics', async (ctx) => {
    ctx.type = deps.metrics.contentType
    ctx.body = await deps.metrics.metrics()
  })
  router.post('/hooks/git', async (ctx) => {
    const secret = deps.webhookSecret
    if (!secret) {
      ctx.status = 404
      ctx.body = { message: 'no webhook secret is configured' }
      return
    }
    const raw = await readSmallBody(ctx.req, 1 << 20)
    const hub = ctx.get('X-Hub-Signature-256')
    const gitlab = ctx.get('X-Gitlab-Token')
    const eq = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))
    const ok = hub ? eq(hub, `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`) : gitlab ? eq(gitlab, secret) : false
    if (!ok) throw new RulekeeperError('Unauthorized', 'the webhook signature is missing or wrong')
    void deps.status.reconcile({ allowMassDelete: false }).catch(() => {})
    ctx.status = 202
    ctx.body = { message: 'reconcile scheduled' }
  })
}

export function addBaseRoutes(router: Router<ApiState>, deps: { tokens: TokenStore; basePath: string; status: StatusSource }): void {
  const doc = JSON.stringify(openApiDocument(deps.basePath))
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json'
    ctx.body = doc
  })
  router.get('/status', requirePermission(deps.tokens, 'View Rules'), (ctx) => {
    ctx.body = deps.status.status()
  })
  router.post('/reconcile', requirePermission(deps.tokens, 'Manage Rules'), async (ctx) => {
    rejectUnknownParams(ctx.query, ['allow-mass-delete'])
    ctx.body = await deps.status.reconcile({ allowMassDelete: booleanParam(ctx.query, 'allow-mass-delete', false) })
  })
}

async function readSmallBody(req: AsyncIterable<Buffer>, max: number): Promise<Buffer> {
  const chunks: Buffer[] = []
  let n = 0
  for await (const c of req) {
    n += c.length
    if (n > max) throw new RulekeeperError('PayloadTooLarge', `the body is larger than ${max} bytes`)
    chunks.push(c)
  }
  return Buffer.concat(chunks)
}
