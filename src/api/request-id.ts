// Every response carries an `X-Request-Id`: the caller's if it sent a sane one, a new one otherwise.
// The id goes into logs, 5xx bodies and the `Request-Id` trailer of commits.
import { randomUUID } from 'node:crypto'
import type Koa from 'koa'
import type { ApiState } from './context.js'

const SANE = /^[A-Za-z0-9._:-]{1,128}$/

export function requestId(): Koa.Middleware<ApiState> {
  return async (ctx, next) => {
    // The raw header and setHeader: what ctx.get / ctx.set do here, without their per-call work.
    const given = ctx.req.headers['x-request-id']
    const id = typeof given === 'string' && SANE.test(given) ? given : randomUUID()
    ctx.state.requestId = id
    ctx.res.setHeader('X-Request-Id', id)
    await next()
  }
}
