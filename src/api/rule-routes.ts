// The routes of one rule kind: list, create, get, replace, delete. Auth runs first (before the
// body is read), then the body reader, then validation, the unit tests, and the write through the
// single writer queue. All failures are thrown; the error funnel answers.
import type Router from '@koa/router'
import type { RouterMiddleware } from '@koa/router'
import { notFound, notImplemented, RulekeeperError, validationFailed } from '../errors.js'
import type { TokenStore } from '../auth/token-store.js'
import { kindDef } from '../rules/kinds/index.js'
import type { RuleKind } from '../rules/model.js'
import { idProblem } from '../rules/rule-id.js'
import type { EngineRegistry } from '../engine/engine.js'
import type { RuleCatalog } from '../service/catalog.js'
import type { RuleWriter, WriteActor } from '../service/rule-writer.js'
import { indexContext, listRules, ruleJson, ruleRepresentation, type ReadContext } from '../service/rule-views.js'
import type { IndexedRule } from '../rules/rule-index.js'
import { requirePermission } from './auth.js'
import type { ApiState } from './context.js'
import { readJsonBody } from './json-body.js'
import { booleanParam, parseListQuery, rejectUnknownParams } from './query.js'
import { changeReason, checkBodyLimits, checkFileSize, type RuleLimits } from './rule-limits.js'
import { hasTests, prepareRule, runRuleTests } from './rule-requests.js'
import { testScope } from './test-scope.js'

const JSON_TYPE = 'application/json; charset=utf-8'

export interface RuleRoutesDeps {
  /** What reads are served from (the published index and its history metadata). */
  catalog: Pick<RuleCatalog, 'index' | 'history'>
  engines: EngineRegistry
  /** Where writes are queued. */
  writer: Pick<RuleWriter, 'submit'>
  tokens: TokenStore
  maxBodyBytes: number
  ruleLimits: RuleLimits
  backend: 'snowflake' | 'databricks'
  pythonFor?: (rule: IndexedRule) => string | undefined
  /** Wall clock for all the unit tests of one request (default 120 s). */
  testBudgetMs?: number
}

export function addRuleRoutes(router: Router<ApiState>, kind: RuleKind, deps: RuleRoutesDeps): void {
  const def = kindDef(kind)
  const base = `/${def.apiPath}`
  const view = requirePermission(deps.tokens, 'View Rules')
  const manage = requirePermission(deps.tokens, 'Manage Rules')
  const body = readJsonBody(deps.maxBodyBytes)
  const { catalog, engines, writer } = deps
  const rc = (): ReadContext => ({
    index: catalog.index,
    history: catalog.history,
    engines,
    pythonFor: deps.pythonFor,
  })
  // Only the routes that can be switched off carry the gate: every layer costs on the hot path.
  const gate: RouterMiddleware<ApiState>[] = def.unavailableOn.includes(deps.backend)
    ? [
        async () => {
          throw notImplemented(`${kind} rules are not available on the ${deps.backend} backend`)
        },
      ]
    : []
  const actorOf = (state: ApiState): WriteActor => ({
    id: state.token!.id,
    type: 'api-token',
    name: state.token!.name,
    email: `${state.token!.id}@api-token.rulekeeper`,
  })

  router.get(base, view, ...gate, async (ctx) => {
    ctx.body = listRules(rc(), kind, parseListQuery(kind, ctx.query))
  })

  const getParams = def.pythonView ? ['include-python'] : []
  router.get(`${base}/:id`, view, ...gate, async (ctx) => {
    // No query string (the usual case): nothing to reject and no query object to build.
    let includePython = false
    if (ctx.querystring !== '') {
      rejectUnknownParams(ctx.query, getParams)
      includePython = def.pythonView && booleanParam(ctx.query, 'include-python', false)
    }
    const rule = catalog.index.get(kind, ctx.params.id!)
    if (!rule) throw notFound(`${kind} rule ${ctx.params.id} not found`)
    if (includePython) ctx.body = ruleRepresentation(rc(), rule, true)
    else {
      // What `ctx.type = 'application/json'` sets, without its per-request lookup.
      ctx.set('Content-Type', JSON_TYPE)
      ctx.body = ruleJson(rc(), rule)
    }
  })

  const write =
    (method: 'POST' | 'PUT'): RouterMiddleware<ApiState> =>
    async (ctx) => {
      rejectUnknownParams(ctx.query, ['run-tests-first', 'run-tests-only'])
      const runFirst = booleanParam(ctx.query, 'run-tests-first', true)
      const runOnly = booleanParam(ctx.query, 'run-tests-only', false)
      const pathId = method === 'PUT' ? ctx.params.id! : undefined
      const pathIdProblem = pathId === undefined ? undefined : idProblem(pathId)
      if (pathIdProblem) throw validationFailed([{ path: '/id', message: `the id in the path ${pathIdProblem}` }])
      const reason = changeReason(ctx.get('X-Change-Reason'))
      checkBodyLimits(ctx.state.body, deps.ruleLimits)
      const scope = testScope(ctx, deps.testBudgetMs ?? 120_000)
      const ectx = { ...indexContext(catalog.index), run: scope.run }
      let prepared: Awaited<ReturnType<typeof prepareRule>>
      try {
        prepared = await prepareRule(kind, ctx.state.body, pathId, engines, ectx)
        checkFileSize(prepared.data, deps.ruleLimits)
        if ((runFirst || runOnly) && hasTests(prepared.rule)) {
          const run = await runRuleTests(prepared.rule, engines, ectx)
          if (!run.passed)
            throw new RulekeeperError('TestsFailed', 'one or more unit tests failed; nothing was saved', {
              testResults: run.testResults,
            })
        }
      } finally {
        scope.done()
      }
      if (runOnly) {
        ctx.status = 204
        return
      }
      const outcome = await writer.submit({
        type: method === 'POST' ? 'create' : 'replace',
        kind,
        id: prepared.rule.id,
        data: prepared.data,
        pythonSource: prepared.rule.pythonSource,
        actor: actorOf(ctx.state),
        requestId: ctx.state.requestId,
        reason,
      })
      const saved = outcome.rule ?? catalog.index.get(kind, prepared.rule.id)
      if (!saved)
        throw new RulekeeperError(
          'Conflict',
          `${kind} rule ${prepared.rule.id} was changed by another writer meanwhile`,
        )
      ctx.status = outcome.status === 'created' && method === 'PUT' ? 201 : 200
      ctx.state.write = { kind, ruleId: prepared.rule.id, change: outcome.status, commit: outcome.commit }
      ctx.body = ruleRepresentation(rc(), saved)
    }

  router.post(base, manage, ...gate, body, write('POST'))
  router.put(`${base}/:id`, manage, ...gate, body, write('PUT'))

  router.delete(`${base}/:id`, manage, ...gate, async (ctx) => {
    rejectUnknownParams(ctx.query, [])
    const reason = changeReason(ctx.get('X-Change-Reason'))
    const outcome = await writer.submit({
      type: 'delete',
      kind,
      id: ctx.params.id!,
      actor: actorOf(ctx.state),
      requestId: ctx.state.requestId,
      reason,
    })
    ctx.state.write = { kind, ruleId: ctx.params.id ?? '', change: outcome.status, commit: outcome.commit }
    ctx.status = 204
  })
}
