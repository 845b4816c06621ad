// GET /status/invalid-files (View Rules, as /status): every invalid file of the served revision, by
// path in byte order, paged like the rule lists (`cursor`, `limit`, `{ results, next }`); and the
// `invalidFilesNext` cursor /status and /reconcile add when their first page of invalid files is not
// the whole list. A cursor names the last path returned, so it stays valid across revisions.
import type Router from '@koa/router'
import type { TokenStore } from '../auth/token-store.js'
import { requirePermission } from './auth.js'
import type { ApiState } from './context.js'
import { decodeCursor, encodeCursor, parseLimit, rejectUnknownParams, single } from './query.js'

/** What /status answers with, as far as the invalid files go (the rest passes through as it is). */
export interface StatusAnswer {
  invalidFiles: ReadonlyArray<{ path: string }>
  invalidFileCount: number
}

export interface InvalidFileSource {
  /** Up to `limit` invalid files after the path `after` (null: from the first); `more` when others follow. */
  invalidFiles(after: string | null, limit: number): { results: ReadonlyArray<{ path: string }>; more: boolean }
}

const KIND = 'invalid-files'

const cursorAfter = (path: string) => encodeCursor({ k: KIND, a: path })

function decodeAfter(text: string): string {
  return decodeCursor(
    text,
    (v): v is { k: string; a: string } =>
      typeof v === 'object' &&
      v !== null &&
      (v as { k?: unknown }).k === KIND &&
      typeof (v as { a?: unknown }).a === 'string',
  ).a
}

/** The status with `invalidFilesNext`: the cursor of GET /status/invalid-files after its last invalid file, or null. */
export function withInvalidFilesNext<T extends StatusAnswer>(s: T): T & { invalidFilesNext: string | null } {
  const last = s.invalidFiles.at(-1)
  return { ...s, invalidFilesNext: last && s.invalidFileCount > s.invalidFiles.length ? cursorAfter(last.path) : null }
}

export function addInvalidFilesRoute(router: Router<ApiState>, tokens: TokenStore, source: InvalidFileSource): void {
  router.get('/status/invalid-files', requirePermission(tokens, 'View Rules'), (ctx) => {
    rejectUnknownParams(ctx.query, ['cursor', 'limit'])
    const limit = parseLimit(single(ctx.query, 'limit'))
    const cursor = single(ctx.query, 'cursor')
    const after = cursor === undefined || cursor === '' ? null : decodeAfter(cursor)
    const { results, more } = source.invalidFiles(after, limit)
    const last = results.at(-1)
    ctx.body = { results, next: more && last ? cursorAfter(last.path) : null }
  })
}
