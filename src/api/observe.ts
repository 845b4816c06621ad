// Per-request observability: one JSON log line (request id, actor, route, status, duration; at
// warn for a refused credential, with the token id presented), one more for a write (kind, rule
// id, change, commit, actor), and the Prometheus request counter and histogram, labelled by the
// matched route, not the raw path, so ids never explode the label set.
import { performance } from 'node:perf_hooks'
import type Koa from 'koa'
import type { Logger } from '../log.js'
import { Counter, Histogram, type Registry } from '../metrics.js'
import type { ApiState } from './context.js'

export function observe(logger: Logger, registry: Registry): Koa.Middleware<ApiState> {
  const requests = new Counter({
    name: 'rulekeeper_http_requests_total',
    help: 'HTTP requests',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  })
  const duration = new Histogram({
    name: 'rulekeeper_http_request_duration_seconds',
    help: 'HTTP request duration',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  })
  return async (ctx, next) => {
    const start = performance.now()
    try {
      await next()
    } finally {
      const seconds = (performance.now() - start) / 1e3
      // Only route patterns become labels: raw paths (ids) would explode the label set.
      const route = (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? 'unmatched'
      const labels = { method: ctx.method, route: String(route), status: String(ctx.status) }
      requests.inc(labels)
      duration.observe(labels, seconds)
      const { requestId, token, write, presentedTokenId } = ctx.state
      const fields = {
        requestId,
        actor: token?.id,
        method: ctx.method,
        route: labels.route,
        status: ctx.status,
        ms: Math.round(seconds * 1e4) / 10,
      }
      if (ctx.status === 401 || ctx.status === 403)
        // Every refused credential (API token, log-source token, webhook signature); the id of the
        // token presented when there is one, never the secret.
        logger.warn({ ...fields, tokenId: presentedTokenId }, 'request')
      else logger.info(fields, 'request')
      if (write && ctx.status < 300)
        logger.info(
          {
            requestId,
            actor: token?.id,
            kind: write.kind,
            ruleId: write.ruleId,
            change: write.change,
            commit: write.commit,
          },
          `rule ${write.change}`,
        )
    }
  }
}
