// The run scope of the unit tests one API request starts: whose they are (the token, for the
// Python queue's fairness) and when they must stop — the request's test time budget, or the client
// going away (nobody would read the answer, so its queued and running Python jobs are dropped).
import type Koa from 'koa'
import type { RunScope } from '../engine/engine.js'
import type { ApiState } from './context.js'

export interface TestScope {
  run: RunScope
  /** Stops the budget timer and the disconnect watch (call when the request is answered). */
  done(): void
}

export function testScope(ctx: Koa.ParameterizedContext<ApiState>, budgetMs: number): TestScope {
  const controller = new AbortController()
  const timer = setTimeout(
    () => controller.abort(new Error(`the request's test time budget of ${Math.round(budgetMs / 1000)} s was used up`)),
    budgetMs,
  )
  const onClose = () => {
    if (!ctx.res.writableFinished) controller.abort(new Error('the client disconnected'))
  }
  ctx.res.once('close', onClose)
  return {
    run: { owner: ctx.state.token?.id, signal: controller.signal },
    done() {
      clearTimeout(timer)
      ctx.res.off('close', onClose)
    },
  }
}
