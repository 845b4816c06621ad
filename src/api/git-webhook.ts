// POST /hooks/git, the push webhook (repository.md): a GitHub/Gitea `X-Hub-Signature-256` HMAC over
// the body, or a GitLab `X-Gitlab-Token`, with secret RULEKEEPER_GIT_WEBHOOK_SECRET (404 without
// one). Checked in order of cost, so an unauthenticated caller never makes us read its body:
//  1. headers only: a GitLab token is compared (digests, constant time, any length) and the body is
//     never read; a hub signature must be `sha256=` + 64 hex digits, else 401 at once;
//  2. only then the body, bounded (bounded-body.ts, 1 MiB; a larger Content-Length is refused
//     unread): the HMAC is over the body, so it must be read to be checked;
//  3. only an authentic delivery reaches the replay check: one already seen (same signature, or
//     same delivery id) within 24 h is acknowledged with 200 and runs nothing;
//  4. a pull-request event (plans/pull-request-event.ts) goes to the pull-request checks, when they
//     are configured, and never schedules a reconcile (nothing was merged); any other event does.
// A refusal before the body is read closes the connection, so the unread body is not drained.
import { createHash, createHmac } from 'node:crypto'
import { type BodyLimit, readBoundedBody } from '../bounded-body.js'
import { bytesEqual } from '../constant-time.js'
import type Router from '@koa/router'
import type { Context } from 'koa'
import { badRequest, notFound, RulekeeperError } from '../errors.js'
import { type PullRequestEvent, pullRequestEvent } from '../plans/pull-request-event.js'
import type { ApiState } from './context.js'
import { RecentDeliveries } from './recent-deliveries.js'

const WEBHOOK_MAX_BODY_BYTES = 1 << 20
/** Read only to check the HMAC: a refused body is left unread and the connection closed. */
const BODY_LIMIT: BodyLimit = {
  maxBytes: WEBHOOK_MAX_BODY_BYTES,
  tooLarge: () => new RulekeeperError('PayloadTooLarge', `the body is larger than ${WEBHOOK_MAX_BODY_BYTES} bytes`),
  rest: 'close',
}
const HUB_RE = /^sha256=([0-9a-f]{64})$/
/** Headers naming a delivery (GitHub, Gitea, Gogs, GitLab); a redelivery keeps its id. */
const DELIVERY_HEADERS = ['X-GitHub-Delivery', 'X-Gitea-Delivery', 'X-Gogs-Delivery', 'X-Gitlab-Event-UUID']

export interface WebhookDeps {
  secret?: string
  reconcile(): void
  deliveries?: RecentDeliveries
  /** Takes a pull-request event; answers what it did with it. Absent: pull requests are not checked. */
  pullRequest?(ev: PullRequestEvent): string
}

/** Whether the delivery's headers name a pull-request event (GitHub, Gitea, GitLab). */
function isPullRequestDelivery(ctx: Context): boolean {
  return (
    ctx.get('X-GitHub-Event') === 'pull_request' ||
    ctx.get('X-Gitea-Event') === 'pull_request' ||
    ctx.get('X-Gitlab-Event') === 'Merge Request Hook'
  )
}

const sha256 = (s: string) => createHash('sha256').update(s, 'latin1').digest()

export function addGitWebhook(router: Router<ApiState>, deps: WebhookDeps): void {
  const deliveries = deps.deliveries ?? new RecentDeliveries()
  const secret = deps.secret
  const secretDigest = secret === undefined ? undefined : sha256(secret)
  router.post('/hooks/git', async (ctx) => {
    if (!secret || !secretDigest) throw notFound('no webhook secret is configured')
    const hub = ctx.get('X-Hub-Signature-256')
    const gitlab = ctx.get('X-Gitlab-Token')
    const keys: string[] = []
    let raw: Buffer | undefined
    if (hub) {
      const m = HUB_RE.exec(hub)
      if (!m) refuseUnread(ctx, 'the webhook signature is missing or wrong')
      raw = await readBoundedBody(ctx, BODY_LIMIT)
      const expected = createHmac('sha256', secret).update(raw).digest()
      if (!bytesEqual(Buffer.from(m![1]!, 'hex'), expected))
        throw new RulekeeperError('Unauthorized', 'the webhook signature is missing or wrong')
      keys.push(`sig:${m![1]}`)
    } else if (gitlab) {
      if (!bytesEqual(sha256(gitlab), secretDigest)) refuseUnread(ctx, 'the webhook signature is missing or wrong')
    } else {
      refuseUnread(ctx, 'the webhook signature is missing or wrong')
    }
    for (const h of DELIVERY_HEADERS) {
      const id = ctx.get(h)
      if (id) keys.push(`id:${id.slice(0, 200)}`)
    }
    if (keys.length > 0 && !deliveries.remember(keys)) {
      ctx.status = 200
      ctx.body = { message: 'delivery already received; nothing scheduled' }
      return
    }
    if (isPullRequestDelivery(ctx)) {
      ctx.status = 202
      if (!deps.pullRequest) {
        ctx.body = { message: 'pull request checks are not configured; nothing scheduled' }
        return
      }
      // Authentic by now: a GitLab delivery's body is read only here.
      raw ??= await readBoundedBody(ctx, BODY_LIMIT)
      let body: unknown
      try {
        body = JSON.parse(raw.toString('utf8'))
      } catch {
        throw badRequest('the pull request event is not JSON')
      }
      const ev = pullRequestEvent((h) => ctx.get(h), body)
      ctx.body = { message: ev ? deps.pullRequest(ev) : 'not a pull request opened or updated; nothing scheduled' }
      return
    }
    deps.reconcile()
    ctx.status = 202
    ctx.body = { message: 'reconcile scheduled' }
  })
}

/** Refuses without reading the body, and closes the connection so the body is not drained. */
function refuseUnread(ctx: Context, message: string): never {
  ctx.set('Connection', 'close')
  throw new RulekeeperError('Unauthorized', message)
}
