// The routes of one rule kind: list, create, get, replace, delete, and its history (history, a
// revision, diff, restore). Auth runs first (before the body is read), then the body reader, then
// validation, the unit tests, and the write through the single writer queue, which judges
// If-Match / If-None-Match on the tree it commits on. All failures are thrown; the error funnel answers.
import type Router from '@koa/router'
import type { RouterMiddleware } from '@koa/router'
import { badRequest, notFound, notImplemented, RulekeeperError, validationFailed } from '../errors.js'
import type { TokenStore } from '../auth/token-store.js'
import { kindDef } from '../rules/kinds/index.js'
import type { RuleKind } from '../rules/model.js'
import { idProblem } from '../rules/rule-id.js'
import type { EngineRegistry } from '../engine/engine.js'
import type { RuleCatalog } from '../service/catalog.js'
import { parseEtagHeader, type Precondition } from '../service/etag.js'
import type { RuleHistoryReads } from '../service/rule-history.js'
import type { RuleWriter, WriteActor } from '../service/rule-writer.js'
import { indexContext, listRules, ruleJson, ruleRepresentation, type ReadContext } from '../service/rule-views.js'
import type { IndexedRule } from '../rules/rule-index.js'
import { requirePermission } from './auth.js'
import type { ApiState } from './context.js'
import { readJsonBody } from './json-body.js'
import {
  booleanParam,
  decodeHistoryCursor,
  historyCursor,
  nonEmpty,
  parseLimit,
  parseListQuery,
  rejectUnknownParams,
  ruleListCursor,
  single,
} from './query.js'
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
  /** The rule's past and its ETag (the repository behind the catalog). */
  reads: RuleHistoryReads
  tokens: TokenStore
  maxBodyBytes: number
  ruleLimits: RuleLimits
  backend: 'snowflake' | 'databricks'
  pythonFor?: (rule: IndexedRule) => string | undefined
  /** Deployment-dependent warnings of a rule's representation (rule-views.ts). */
  ruleWarnings?: ReadContext['ruleWarnings']
  /** Wall clock for all the unit tests of one request (default 120 s). */
  testBudgetMs?: number
}

export function addRuleRoutes(router: Router<ApiState>, kind: RuleKind, deps: RuleRoutesDeps): void {
  const def = kindDef(kind)
  const base = `/${def.apiPath}`
  const view = requirePermission(deps.tokens, 'View Rules')
  const manage = requirePermission(deps.tokens, 'Manage Rules')
  const body = readJsonBody(deps.maxBodyBytes)
  const { catalog, engines, writer, reads } = deps
  const rc = (): ReadContext => ({
    index: catalog.index,
    history: catalog.history,
    engines,
    pythonFor: deps.pythonFor,
    ruleWarnings: deps.ruleWarnings,
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
    const page = listRules(rc(), kind, parseListQuery(kind, ctx.query))
    ctx.body = { results: page.results, next: page.next === null ? null : ruleListCursor(kind, page.next) }
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
    ctx.set('ETag', await reads.etag(rule))
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
      const precondition = method === 'PUT' ? preconditionOf(ctx, true) : undefined
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
        precondition,
      })
      const saved = outcome.rule ?? catalog.index.get(kind, prepared.rule.id)
      if (!saved)
        throw new RulekeeperError(
          'Conflict',
          `${kind} rule ${prepared.rule.id} was changed by another writer meanwhile`,
        )
      ctx.status = outcome.status === 'created' && method === 'PUT' ? 201 : 200
      ctx.state.write = { kind, ruleId: prepared.rule.id, change: outcome.status, commit: outcome.commit }
      if (outcome.etag) ctx.set('ETag', outcome.etag)
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
      precondition: preconditionOf(ctx, false),
    })
    ctx.state.write = { kind, ruleId: ctx.params.id ?? '', change: outcome.status, commit: outcome.commit }
    ctx.status = 204
  })

  // History: a deleted id's history stays readable, so these look at the id's commits, not the index.
  router.get(`${base}/:id/history`, view, ...gate, async (ctx) => {
    rejectUnknownParams(ctx.query, ['cursor', 'limit'])
    const cursor = typeof ctx.query.cursor === 'string' ? ctx.query.cursor : undefined
    const page = await reads.page(
      kind,
      ctx.params.id!,
      cursor === undefined ? undefined : decodeHistoryCursor(cursor),
      parseLimit(single(ctx.query, 'limit')),
    )
    ctx.body = { results: page.results, next: page.next && historyCursor(page.next) }
  })

  router.get(`${base}/:id/history/:revision`, view, ...gate, async (ctx) => {
    rejectUnknownParams(ctx.query, [])
    ctx.body = await reads.representationAt(kind, ctx.params.id!, ctx.params.revision!)
  })

  router.get(`${base}/:id/diff`, view, ...gate, async (ctx) => {
    rejectUnknownParams(ctx.query, ['from', 'to'])
    const from = nonEmpty(ctx.query, 'from')
    if (from === undefined) throw badRequest('from is required: the revision to compare from')
    ctx.body = await reads.diff(kind, ctx.params.id!, from, nonEmpty(ctx.query, 'to'))
  })

  router.post(`${base}/:id/restore`, manage, ...gate, async (ctx) => {
    rejectUnknownParams(ctx.query, ['revision', 'run-tests-first'])
    const revision = nonEmpty(ctx.query, 'revision')
    if (revision === undefined) throw badRequest('revision is required: the commit to restore the rule from')
    const runFirst = booleanParam(ctx.query, 'run-tests-first', true)
    const reason = changeReason(ctx.get('X-Change-Reason'))
    const precondition = preconditionOf(ctx, false)
    const id = ctx.params.id!
    const { rule, at } = await reads.ruleAt(kind, id, revision)
    if (runFirst && hasTests(rule.file)) {
      const scope = testScope(ctx, deps.testBudgetMs ?? 120_000)
      try {
        const run = await runRuleTests(rule.file, engines, { ...indexContext(catalog.index), run: scope.run })
        if (!run.passed)
          throw new RulekeeperError(
            'TestsFailed',
            'one or more unit tests of that revision failed; nothing was restored',
            {
              testResults: run.testResults,
            },
          )
      } finally {
        scope.done()
      }
    }
    const outcome = await writer.submit({
      type: 'restore',
      kind,
      id,
      revision: at.revision,
      files: at.files,
      actor: actorOf(ctx.state),
      requestId: ctx.state.requestId,
      reason,
      precondition,
    })
    const saved = outcome.rule ?? catalog.index.get(kind, id)
    if (!saved) throw new RulekeeperError('Conflict', `${kind} rule ${id} was changed by another writer meanwhile`)
    ctx.state.write = { kind, ruleId: id, change: outcome.status, commit: outcome.commit }
    if (outcome.etag) ctx.set('ETag', outcome.etag)
    ctx.body = ruleRepresentation(rc(), saved)
  })
}

/** If-Match (and, on PUT, If-None-Match: *) of a write request. */
function preconditionOf(ctx: { get(name: string): string }, put: boolean): Precondition | undefined {
  const ifMatch = parseEtagHeader('If-Match', ctx.get('If-Match') || undefined)
  const none = parseEtagHeader('If-None-Match', ctx.get('If-None-Match') || undefined)
  if (none !== undefined && (!put || none !== '*'))
    throw badRequest(
      put ? 'If-None-Match: only * (create only) is supported on PUT' : 'If-None-Match is supported on PUT only',
    )
  if (ifMatch === undefined && none === undefined) return undefined
  return { ...(ifMatch !== undefined ? { ifMatch } : {}), ...(none === '*' ? { ifNoneMatch: '*' as const } : {}) }
}
