// GET /rule-health (View Rules, as the rule list needs): per served rule, in rule id order, its newest
// alert, its alerts of the last 24 hours, its latest rule error (time and message head) and the last
// and next run of a scheduled one (service/rule-health.ts); `rule-id` narrows it to some rules, in
// cursor pages like every list. Counts and times only: no alert or record content.
import type Router from '@koa/router'
import type { TokenStore } from '../auth/token-store.js'
import type { RuleHealth } from '../service/rule-health.js'
import { requirePermission } from './auth.js'
import type { ApiState } from './context.js'
import {
  decodeCursor,
  encodeCursor,
  listParam,
  nonEmpty,
  parseLimit,
  type Query,
  rejectUnknownParams,
  tuple,
} from './query.js'

/** What the route needs (service/rule-health.ts `RuleHealthReads`). */
export interface RuleHealthSource {
  page(q: { ruleIds?: readonly string[]; after?: string; limit: number }): Promise<{
    results: RuleHealth[]
    next: string | null
  }>
}

export function addRuleHealthRoute(router: Router<ApiState>, deps: { tokens: TokenStore; health: RuleHealthSource }) {
  router.get('/rule-health', requirePermission(deps.tokens, 'View Rules'), async (ctx) => {
    const q = ctx.query as Query
    rejectUnknownParams(q, ['rule-id', 'cursor', 'limit'])
    const cursor = nonEmpty(q, 'cursor')
    const after = cursor === undefined ? undefined : decodeCursor(cursor, tuple<[string]>('s'))[0]
    const page = await deps.health.page({
      ruleIds: listParam(q, 'rule-id'),
      after,
      limit: parseLimit(nonEmpty(q, 'limit')),
    })
    ctx.body = { results: page.results, next: page.next === null ? null : encodeCursor([page.next]) }
  })
}
