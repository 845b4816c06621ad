// GET /status/invalid-files (View Rules, as /status): every invalid file of the served revision, by
// path in byte order, paged like the rule lists (`cursor`, `limit`, `{ results, next }`); and the
// `invalidFilesNext` cursor of /status and /reconcile, made from the position their status source
// gives. A cursor names the last path returned (a long one by prefix and digest), so it stays valid
// across revisions.
import type Router from '@koa/router'
import type { TokenStore } from '../auth/token-store.js'
import { requirePermission } from './auth.js'
import type { ApiState } from './context.js'
import type { InvalidFilesPosition } from '../reconcile/invalid-files.js'
import { decodeCursor, encodeCursor, parseLimit, rejectUnknownParams, single } from './query.js'

/** What /status answers with, as far as the invalid files go (the rest passes through as it is). */
export interface StatusAnswer {
  invalidFiles: readonly unknown[]
  invalidFileCount: number
  /** Where the invalid files after `invalidFiles` begin; null when it is the whole list. */
  invalidFilesNext: InvalidFilesPosition | null
}

export interface InvalidFileSource {
  /** Up to `limit` invalid files after `after` (null: from the first); `next` when others follow. */
  invalidFiles(
    after: InvalidFilesPosition | null,
    limit: number,
  ): { results: readonly unknown[]; next: InvalidFilesPosition | null }
}

const KIND = 'invalid-files'

const cursorOf = (at: InvalidFilesPosition | null): string | null =>
  at === null ? null : encodeCursor('path' in at ? { k: KIND, a: at.path } : { k: KIND, p: at.prefix, h: at.digest })

function positionOf(text: string): InvalidFilesPosition {
  const v = decodeCursor(
    text,
    (v): v is { k: string; a?: string; p?: string; h?: string } =>
      typeof v === 'object' &&
      v !== null &&
      (v as { k?: unknown }).k === KIND &&
      (typeof (v as { a?: unknown }).a === 'string' ||
        (typeof (v as { p?: unknown }).p === 'string' && typeof (v as { h?: unknown }).h === 'string')),
  )
  return v.a !== undefined ? { path: v.a } : { prefix: v.p!, digest: v.h! }
}

/** The status with `invalidFilesNext` as a cursor of GET /status/invalid-files (null when the list is whole). */
export function withInvalidFilesNext<T extends StatusAnswer>(
  s: T,
): Omit<T, 'invalidFilesNext'> & {
  invalidFilesNext: string | null
} {
  return { ...s, invalidFilesNext: cursorOf(s.invalidFilesNext) }
}

export function addInvalidFilesRoute(router: Router<ApiState>, tokens: TokenStore, source: InvalidFileSource): void {
  router.get('/status/invalid-files', requirePermission(tokens, 'View Rules'), (ctx) => {
    rejectUnknownParams(ctx.query, ['cursor', 'limit'])
    const limit = parseLimit(single(ctx.query, 'limit'))
    const cursor = single(ctx.query, 'cursor')
    const { results, next } = source.invalidFiles(
      cursor === undefined || cursor === '' ? null : positionOf(cursor),
      limit,
    )
    ctx.body = { results, next: cursorOf(next) }
  })
}
