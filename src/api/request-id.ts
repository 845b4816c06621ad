// Every response carries an `X-Request-Id`: the caller's if it sent a sane one, a new one otherwise.
// The id goes into logs, 5xx bodies and the `Request-Id` trailer of commits.
import { randomUUID } from 'node:crypto'
import type Koa from 'koa'
import type { ApiState } from './context.js'

const SANE = /^[A-Za-z0-9._:-]{1,128}$/

export function requestId(): Koa.Middleware<ApiState> {
  return async (ctx, next) => {
    const given = ctx.get('X-Request-Id')
    ctx.state.requestId = SANE.test(given) ? given : randomUUID()
    ctx.set('X-Request-Id', ctx.state.requestId)
    await next()
  }
}
