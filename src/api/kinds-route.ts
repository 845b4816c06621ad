// `GET /kinds` (under the base path): every rule kind as the API names it, with what a client needs
// to offer it — its path, label, id field, whether it has Python code or filters by log type, its
// read-only fields and the template a new rule starts from — all read from the kinds' registry
// (rules/kinds/), so a client (the console) lists no kind by hand. Any known token may ask.
import type Router from '@koa/router'
import type { TokenStore } from '../auth/token-store.js'
import { KINDS, type RuleKindDef } from '../rules/kinds/index.js'
import { requireToken } from './auth.js'
import type { ApiState } from './context.js'
import { rejectUnknownParams } from './query.js'

/** One kind as `GET /kinds` describes it. */
export function kindSummary(def: RuleKindDef): Record<string, unknown> {
  const id = def.fields.find((f) => f.api === 'id')
  return {
    name: def.name,
    path: def.apiPath,
    label: def.label,
    title: def.title,
    idField: 'id',
    idFileKey: id?.file ?? 'RuleID',
    python: def.companion !== undefined,
    pythonView: def.pythonView,
    logTypeFilter: def.listFilters.some((f) => f.field === 'logTypes'),
    readOnlyFields: [...def.fields, ...def.extraFields].filter((f) => f.readOnly).map((f) => f.api),
    template: def.template,
  }
}

export function addKindsRoute(router: Router<ApiState>, tokens: TokenStore): void {
  // The registry is fixed for the life of the process: the answer is built once.
  const body = JSON.stringify({ kinds: KINDS.map(kindSummary) })
  router.get('/kinds', requireToken(tokens), (ctx) => {
    rejectUnknownParams(ctx.query, [])
    ctx.set('Cache-Control', 'no-store')
    ctx.type = 'application/json'
    ctx.body = body
  })
}
