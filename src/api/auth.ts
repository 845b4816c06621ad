// Route guards: `X-API-Key` → token → permission. Runs before any body is read, so an
// unauthenticated or unauthorized caller never costs a parse: 401 for a missing or unknown token,
// 403 for a known token without the permission the method needs (requireToken: any known token;
// tokenHas: a further permission that changes what a route answers, e.g. replay's alert content).
import type Koa from 'koa'
import { RulekeeperError } from '../errors.js'
import { type Permission, type TokenRecord, type TokenStore, tokenIdOf } from '../auth/token-store.js'
import type { ApiState } from './context.js'

/** The token of `X-API-Key` (401 without a known one); the caller's permission check follows. */
function authenticate(tokens: TokenStore, ctx: Koa.ParameterizedContext<ApiState>): TokenRecord {
  // The raw header (what ctx.get returns, without its per-call lookup work).
  const secret = (ctx.req.headers['x-api-key'] as string | undefined) || ''
  if (!secret) throw new RulekeeperError('Unauthorized', 'missing X-API-Key header')
  const token = tokens.verify(secret)
  if (!token) {
    ctx.state.presentedTokenId = tokenIdOf(secret)
    throw new RulekeeperError('Unauthorized', 'unknown, revoked or expired API token')
  }
  return token
}

export function requirePermission(
  tokens: TokenStore,
  permission: Permission,
  ...more: Permission[]
): Koa.Middleware<ApiState> {
  return async (ctx, next) => {
    const token = authenticate(tokens, ctx)
    // Every permission named is needed; the first one missing is said.
    const missing = [permission, ...more].find((p) => !token.permissions.includes(p))
    if (missing) {
      ctx.state.presentedTokenId = token.id
      throw new RulekeeperError('Forbidden', `this token lacks the ${missing} permission`)
    }
    ctx.state.token = token
    await next()
  }
}

/** Any known token, whatever its permissions (`GET /whoami`: a token may always learn what it is). */
export function requireToken(tokens: TokenStore): Koa.Middleware<ApiState> {
  return async (ctx, next) => {
    ctx.state.token = authenticate(tokens, ctx)
    await next()
  }
}

/** Whether the request's token (set by a guard above) has `permission` too: a route's answer may depend on it. */
export function tokenHas(ctx: Koa.ParameterizedContext<ApiState>, permission: Permission): boolean {
  return ctx.state.token?.permissions.includes(permission) ?? false
}
