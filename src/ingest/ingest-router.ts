// The HTTP face of the log sources: POST /http/:sourceId. Order matters and is the contract: find
// the source (404), check its credential from the headers (401), only then read the body under the
// limits (413/415), parse it (400), and answer 200 once every line is durable.
import { Router } from '@koa/router'
import { RulekeeperError } from '../errors.js'
import type { IngestMetrics } from './ingest-metrics.js'
import type { LogSource } from './log-source.js'
import { parsePayload } from './parse-payload.js'
import { checkPayloadHeaders, readPayload } from './read-payload.js'

export function createIngestRouter(sources: Map<string, LogSource>, metrics: IngestMetrics): Router {
  const router = new Router()
  router.post('/http/:sourceId', async (ctx) => {
    const sourceId = ctx.params.sourceId ?? ''
    const source = sources.get(sourceId)
    let bodyRead = false
    try {
      if (!source)
        throw new RulekeeperError('NotFound', `no log source with id ${JSON.stringify(sourceId.slice(0, 100))}`)
      source.auth.checkHeaders(ctx.req.headers)
      const limits = source.config.limits
      checkPayloadHeaders(ctx, limits)
      const { body } = await readPayload(ctx, limits)
      bodyRead = true
      // No local for the parsed payload: its records are garbage once their lines are queued,
      // not only after the commit is durable (young garbage is cheap, survivors are copied).
      const result = await source.storeDelivery(parsePayload(body, limits.maxRecords))
      ctx.status = 200
      ctx.body = result
      metrics.deliveries.inc({ source: source.config.id, status: '200' })
    } catch (err) {
      const status = err instanceof RulekeeperError ? err.status : 500
      if (source) metrics.deliveries.inc({ source: source.config.id, status: String(status) })
      // A body refused before it was read (401, 404, 413, 415) is not drained: Node would otherwise
      // read and discard whatever an unauthenticated client keeps sending. Closing ends it.
      if (!bodyRead) ctx.set('Connection', 'close')
      throw err
    }
  })
  return router
}
