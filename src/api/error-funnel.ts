// The one place errors become HTTP responses, each body `{ message, code, … }` with the stable code
// of errors.ts. A RulekeeperError answers with its status, code and `{ ...body }`; a 4xx set
// without a body (the router's 404/405) gets a message and the code of its status; a Koa/http error
// with an exposable 4xx status keeps its message; anything else is a 500 (`Internal`) whose body
// carries only the request id (the log has the details, never the client).
import type Koa from 'koa'
import { codeOfStatus, isRulekeeperError } from '../errors.js'
import type { Logger } from '../log.js'
import type { ApiState } from './context.js'

export function errorFunnel(logger: Logger): Koa.Middleware<ApiState> {
  return async (ctx, next) => {
    try {
      await next()
      if (ctx.status === 404 && ctx.body == null) {
        ctx.status = 404
        ctx.body = { message: `no route ${ctx.method} ${ctx.path}`, code: codeOfStatus(404) }
      } else if (ctx.status >= 400 && ctx.body == null) {
        // Answers set without a body (the router's 405/501 for a method a path does not have).
        const allow = ctx.response.get('Allow')
        const status = ctx.status
        ctx.body = {
          message:
            status === 405 && allow
              ? `method ${ctx.method} is not allowed on ${ctx.path}; allowed: ${allow}`
              : `${ctx.method} ${ctx.path}: ${ctx.message}`,
          code: codeOfStatus(status),
        }
        ctx.status = status
      }
    } catch (err) {
      const requestId = ctx.state.requestId
      if (isRulekeeperError(err)) for (const [name, value] of Object.entries(err.headers)) ctx.set(name, value)
      if (isRulekeeperError(err) && err.status < 500) {
        ctx.status = err.status
        ctx.body = { message: err.message, code: err.code, ...err.body }
      } else if (isRulekeeperError(err)) {
        ctx.status = err.status
        ctx.body = { message: err.message, code: err.code, requestId, ...err.body }
        logger.warn({ requestId, code: err.code, msg: err.message }, 'request failed')
      } else {
        const e = err as { status?: number; statusCode?: number; expose?: boolean; message?: string }
        const status = e.status ?? e.statusCode
        if (status && status >= 400 && status < 500 && e.expose !== false) {
          ctx.status = status
          ctx.body = { message: e.message || 'bad request', code: codeOfStatus(status) }
        } else {
          ctx.status = 500
          ctx.body = { message: 'internal error', code: codeOfStatus(500), requestId }
          logger.error({ requestId, err }, 'internal error')
        }
      }
    }
  }
}
