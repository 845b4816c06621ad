// `POST /replay/preview` (View Rules and Manage Rules): `{ kind, rule, from, to }` → what the unsaved
// rule `rule` (a write body of that kind) would have alerted over the stored records of [from, to):
// the replay's answer (records, matches, counts; with View Alerts the alerts, each with its first
// events). The rule is checked as a save checks it (a 400 lists its problems), then replayed in the
// token's fair place within the replay caps; the client going away stops it (replay-route.ts).
import type Router from '@koa/router'
import type { TokenStore } from '../auth/token-store.js'
import type { EngineRegistry } from '../engine/engine.js'
import { badRequest, validationFailed } from '../errors.js'
import { isPlainObject } from '../is-plain-object.js'
import { rfc3339Ms } from '../rfc3339.js'
import type { RuleFile } from '../rules/model.js'
import type { RuleIndex } from '../rules/rule-index.js'
import { indexContext } from '../service/rule-views.js'
import { requirePermission } from './auth.js'
import type { ApiState } from './context.js'
import { readJsonBody } from './json-body.js'
import { streamReplay, type Replays } from './replay-route.js'
import { checkBodyLimits, type RuleLimits } from './rule-limits.js'
import { testScope } from './test-scope.js'
import { kindNamed, kindProblem, unsavedRule } from './unsaved-rule.js'

const FIELDS = ['kind', 'rule', 'from', 'to']

export function addPreviewRoute(
  router: Router<ApiState>,
  deps: {
    tokens: TokenStore
    maxBodyBytes: number
    replays: Replays
    catalog: { readonly index: RuleIndex }
    engines: EngineRegistry
    ruleLimits: RuleLimits
    testBudgetMs: number
  },
): void {
  // It runs code nobody saved: a replay's permission and a test run's (run-tests-only is Manage
  // Rules'), both judged before the body is read.
  const guard = requirePermission(deps.tokens, 'View Rules', 'Manage Rules')
  router.post('/replay/preview', guard, readJsonBody(deps.maxBodyBytes), async (ctx) => {
    const body = ctx.state.body
    if (!isPlainObject(body))
      throw badRequest('the body must be a JSON object: { "kind": …, "rule": { … }, "from": …, "to": … }')
    const errors: Array<{ path: string; message: string }> = []
    for (const k of Object.keys(body))
      if (!FIELDS.includes(k))
        errors.push({ path: `/${k}`, message: `${k} is not a preview field (${FIELDS.join(', ')})` })
    const def = kindNamed(body.kind)
    if (!def) errors.push(kindProblem())
    if (!isPlainObject(body.rule))
      errors.push({ path: '/rule', message: 'rule must be the rule as a write sends it (a JSON object)' })
    const fromMs = rfc3339Ms(body.from)
    const toMs = rfc3339Ms(body.to)
    if (fromMs === undefined) errors.push({ path: '/from', message: 'from must be an RFC 3339 time' })
    if (toMs === undefined) errors.push({ path: '/to', message: 'to must be an RFC 3339 time' })
    if (errors.length) throw validationFailed(errors)
    if (!(fromMs! < toMs!)) throw validationFailed([{ path: '/to', message: 'to must be later than from' }])
    checkBodyLimits(body.rule, deps.ruleLimits)
    const scope = testScope(ctx, deps.testBudgetMs)
    let rule: RuleFile
    try {
      const ectx = { ...indexContext(deps.catalog.index), run: scope.run }
      rule = await unsavedRule(def!.name, body.rule, deps.engines, ectx, 'nothing was run')
    } finally {
      scope.done()
    }
    await streamReplay(ctx, deps.replays, { rule, fromMs: fromMs!, toMs: toMs! })
  })
}
