// `GET /whoami` (under the base path): the calling token's id, name, permissions, creation and expiry
// — never its secret or hash. Any known token may ask, whatever its permissions, so a client (the
// console) learns what it may do without trying it; never stored by a cache. Not in api.md;
// docs/decisions.md says why.
import type Router from '@koa/router'
import type { TokenStore } from '../auth/token-store.js'
import { requireToken } from './auth.js'
import type { ApiState } from './context.js'
import { rejectUnknownParams } from './query.js'

export function addWhoamiRoute(router: Router<ApiState>, tokens: TokenStore): void {
  router.get('/whoami', requireToken(tokens), (ctx) => {
    rejectUnknownParams(ctx.query, [])
    const t = ctx.state.token!
    // The answer depends on X-API-Key, which no cache keys on: none may keep it for another caller.
    ctx.set('Cache-Control', 'no-store')
    ctx.body = {
      id: t.id,
      name: t.name,
      permissions: [...t.permissions],
      createdAt: t.createdAt,
      expiresAt: t.expiresAt,
    }
  })
}
