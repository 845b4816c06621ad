// `GET /log-types` (under the base path): the log types this server ingests — name, table and
// fields — from the narrow LogTypeSource main.ts hands over (the log-type registry), so a client
// (the console) offers the server's log types, not a list of its own. Any known token may ask.
import type Router from '@koa/router'
import type { TokenStore } from '../auth/token-store.js'
import { requireToken } from './auth.js'
import type { ApiState } from './context.js'
import { rejectUnknownParams } from './query.js'

export interface LogTypeField {
  /** The field's path in a record, dotted (`metadata.timestamp`). */
  name: string
  type: string
  required: boolean
  description: string
}

export interface LogTypeInfo {
  /** As rules name it in `LogTypes`, e.g. `Editor.Audit`. */
  name: string
  /** The table its records are queried from, e.g. `panther_logs.public.editor_audit`. */
  table: string
  fields: LogTypeField[]
}

/** What the route reads: the registered log types, in the order they are offered. */
export interface LogTypeSource {
  listLogTypes(): readonly LogTypeInfo[]
}

export function addLogTypesRoute(router: Router<ApiState>, tokens: TokenStore, source: LogTypeSource): void {
  router.get('/log-types', requireToken(tokens), (ctx) => {
    rejectUnknownParams(ctx.query, [])
    ctx.set('Cache-Control', 'no-store')
    ctx.body = { logTypes: source.listLogTypes() }
  })
}
