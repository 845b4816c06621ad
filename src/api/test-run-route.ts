// `POST /test-runs` (Manage Rules): `{ kind, rule, tests? }` → `{ passed, testResults }`: the unit
// tests of an unsaved rule (a write body of that kind), all or only those named in `tests`, with each
// test's result — passed or not, the error, and for Python rules each function's output — whether
// they pass or fail (run-tests-only answers 204 on a pass, without outputs). Nothing is saved; the
// rule is checked as a save checks it (a 400 lists its problems under /rule).
import type Router from '@koa/router'
import type { TokenStore } from '../auth/token-store.js'
import type { EngineRegistry } from '../engine/engine.js'
import { badRequest, type FieldProblem, validationFailed } from '../errors.js'
import { isPlainObject } from '../is-plain-object.js'
import type { RuleIndex } from '../rules/rule-index.js'
import { indexContext } from '../service/rule-views.js'
import { requirePermission } from './auth.js'
import type { ApiState } from './context.js'
import { readJsonBody } from './json-body.js'
import { checkBodyLimits, type RuleLimits } from './rule-limits.js'
import { runRuleTests } from './rule-requests.js'
import { testScope } from './test-scope.js'
import { kindNamed, kindProblem, unsavedRule } from './unsaved-rule.js'

const FIELDS = ['kind', 'rule', 'tests']

export function addTestRunRoute(
  router: Router<ApiState>,
  deps: {
    tokens: TokenStore
    maxBodyBytes: number
    catalog: { readonly index: RuleIndex }
    engines: EngineRegistry
    ruleLimits: RuleLimits
    testBudgetMs: number
  },
): void {
  const manage = requirePermission(deps.tokens, 'Manage Rules')
  router.post('/test-runs', manage, readJsonBody(deps.maxBodyBytes), async (ctx) => {
    const body = ctx.state.body
    if (!isPlainObject(body)) throw badRequest('the body must be a JSON object: { "kind": …, "rule": { … } }')
    const errors: FieldProblem[] = []
    for (const k of Object.keys(body))
      if (!FIELDS.includes(k))
        errors.push({ path: `/${k}`, message: `${k} is not a test-run field (${FIELDS.join(', ')})` })
    const def = kindNamed(body.kind)
    if (!def) errors.push(kindProblem())
    if (!isPlainObject(body.rule))
      errors.push({ path: '/rule', message: 'rule must be the rule as a write sends it (a JSON object)' })
    const names = body.tests
    if (names !== undefined && (!Array.isArray(names) || !names.every((n) => typeof n === 'string')))
      errors.push({ path: '/tests', message: 'tests must be a list of test names' })
    if (errors.length) throw validationFailed(errors)
    checkBodyLimits(body.rule, deps.ruleLimits)
    const scope = testScope(ctx, deps.testBudgetMs)
    try {
      const ectx = { ...indexContext(deps.catalog.index), run: scope.run }
      const rule = await unsavedRule(def!.name, body.rule, deps.engines, ectx, 'no test was run')
      const all = Array.isArray(rule.data.Tests) ? (rule.data.Tests as Array<Record<string, unknown>>) : []
      let tests = all
      if (names) {
        const wanted = new Set(names as string[])
        tests = all.filter((t) => wanted.has(String(t.Name)))
        const missing = [...wanted].filter((n) => !all.some((t) => String(t.Name) === n))
        if (missing.length)
          throw validationFailed(
            missing
              .slice(0, 5)
              .map((n) => ({ path: '/tests', message: `the rule has no test named ${JSON.stringify(n)}` })),
          )
      }
      if (tests.length === 0) throw badRequest('the rule has no test to run')
      ctx.body = await runRuleTests({ ...rule, data: { ...rule.data, Tests: tests } }, deps.engines, ectx)
    } finally {
      scope.done()
    }
  })
}
