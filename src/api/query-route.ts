// POST /queries (Query Data): one read-only SQL query over the stored events, answered a page at a
// time: `{columns, rows, next}`. `next` is a cursor naming the query (a hash of its text), the
// row the next page starts at and the time its macros were expanded at; sent back with the same
// SQL it re-runs the query and skips to that row (docs/queries.md).
import { createHash } from 'node:crypto'
import type Router from '@koa/router'
import type { TokenStore } from '../auth/token-store.js'
import { RulekeeperError, badRequest } from '../errors.js'
import { isPlainObject } from '../is-plain-object.js'
import type { QueryPage, QueryRequest } from '../query/query-engine.js'
import { requirePermission } from './auth.js'
import type { ApiState } from './context.js'
import { readJsonBody } from './json-body.js'
import { rejectUnknownParams } from './query.js'

/** What the route needs of the query engine (query/query-engine.ts). */
export interface QueryRunner {
  run(req: QueryRequest): Promise<QueryPage>
  settings: { maxSqlBytes: number; defaultPageSize: number; maxPageSize: number }
}

interface Cursor {
  /** The first 16 hex digits of the SQL's SHA-256. */
  h: string
  /** The row the page starts at. */
  o: number
  /** The macros' time (ms). */
  t: number
}

const sqlHash = (sql: string) => createHash('sha256').update(sql).digest('hex').slice(0, 16)

function readCursor(text: unknown, sql: string): Cursor {
  let c: unknown
  try {
    c = JSON.parse(Buffer.from(String(text), 'base64url').toString('utf8'))
  } catch {
    c = undefined
  }
  if (
    !isPlainObject(c) ||
    typeof c.h !== 'string' ||
    !Number.isSafeInteger(c.o) ||
    (c.o as number) < 0 ||
    !Number.isSafeInteger(c.t)
  )
    throw badRequest('cursor is not a cursor this endpoint gave')
  if (c.h !== sqlHash(sql)) throw badRequest('cursor belongs to another query: send it with the SQL it came with')
  return c as unknown as Cursor
}

export function addQueryRoute(
  router: Router<ApiState>,
  deps: { tokens: TokenStore; queries: QueryRunner; maxBodyBytes: number },
): void {
  const { settings } = deps.queries
  // The body may hold the largest SQL allowed, escaped, and the other members.
  const bodyLimit = Math.max(deps.maxBodyBytes, settings.maxSqlBytes * 2 + 4096)
  router.post('/queries', requirePermission(deps.tokens, 'Query Data'), readJsonBody(bodyLimit), async (ctx) => {
    rejectUnknownParams(ctx.query, [])
    const body = ctx.state.body
    if (!isPlainObject(body))
      throw badRequest('the body must be a JSON object: {"sql": "…", "pageSize"?: n, "cursor"?: "…"}')
    const unknown = Object.keys(body).filter((k) => !['sql', 'pageSize', 'cursor'].includes(k))
    if (unknown.length > 0) throw badRequest(`unknown member ${unknown[0]}: the body has sql, pageSize and cursor`)
    const { sql, pageSize, cursor } = body
    if (typeof sql !== 'string' || sql.trim() === '') throw badRequest('sql must be a non-empty string')
    if (Buffer.byteLength(sql) > settings.maxSqlBytes)
      throw new RulekeeperError('PayloadTooLarge', `sql is over ${settings.maxSqlBytes} bytes`)
    const limit = pageSize ?? settings.defaultPageSize
    if (!Number.isSafeInteger(limit) || (limit as number) < 1 || (limit as number) > settings.maxPageSize)
      throw badRequest(`pageSize must be an integer from 1 to ${settings.maxPageSize}`)
    const at = cursor === undefined || cursor === null ? { o: 0, t: Date.now() } : readCursor(cursor, sql)
    const page = await deps.queries.run({ sql, nowMs: at.t, offset: at.o, limit: limit as number })
    const next: Cursor = { h: sqlHash(sql), o: at.o + page.rows.length, t: at.t }
    ctx.body = {
      columns: page.columns,
      rows: page.rows,
      next: page.more ? Buffer.from(JSON.stringify(next)).toString('base64url') : null,
    }
  })
}
