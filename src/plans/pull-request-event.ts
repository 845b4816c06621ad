// A forge's pull-request webhook event, read (GitHub and Gitea: `X-GitHub-Event` / `X-Gitea-Event`
// `pull_request`, actions opened, reopened, synchronize(d); GitLab: `X-Gitlab-Event`
// `Merge Request Hook`, actions open, reopen, update): the request's number, head commit, target
// branch, title, and the ref its head is fetched from (GitHub/Gitea `refs/pull/N/head`, GitLab
// `refs/merge-requests/N/head`), and whether it comes from a fork (the head's repository is not the
// base's, or the event does not say). Anything else is not a pull request to plan (null).
import { isPlainObject } from '../is-plain-object.js'

export interface PullRequestEvent {
  forge: 'github' | 'gitea' | 'gitlab'
  number: number
  headSha: string
  baseBranch: string
  title: string
  /** The remote ref holding the request's head. */
  headRef: string
  /** The head is in another repository than the base (a fork), or the event does not say it is not. */
  fromFork: boolean
}

const SHA = /^[0-9a-f]{40}$/
const HUB_ACTIONS = new Set(['opened', 'reopened', 'synchronize', 'synchronized'])
const GITLAB_ACTIONS = new Set(['open', 'reopen', 'update'])

const str = (v: unknown) => (typeof v === 'string' ? v : '')

/** The pull-request event of a delivery (`header` reads a request header), or null. */
export function pullRequestEvent(header: (name: string) => string, body: unknown): PullRequestEvent | null {
  if (!isPlainObject(body)) return null
  const hubEvent = header('X-GitHub-Event') || header('X-Gitea-Event')
  if (hubEvent === 'pull_request') {
    const pr = body.pull_request
    if (!isPlainObject(pr) || !HUB_ACTIONS.has(str(body.action))) return null
    const head = isPlainObject(pr.head) ? pr.head : {}
    const base = isPlainObject(pr.base) ? pr.base : {}
    const number = Number(pr.number ?? body.number)
    if (!Number.isSafeInteger(number) || number < 1 || !SHA.test(str(head.sha))) return null
    const repoOf = (side: Record<string, unknown>) => (isPlainObject(side.repo) ? str(side.repo.full_name) : '')
    return {
      fromFork: repoOf(head) === '' || repoOf(head) !== repoOf(base),
      forge: header('X-Gitea-Event') ? 'gitea' : 'github',
      number,
      headSha: str(head.sha),
      baseBranch: str(base.ref),
      title: str(pr.title).slice(0, 200),
      headRef: `refs/pull/${number}/head`,
    }
  }
  if (header('X-Gitlab-Event') === 'Merge Request Hook') {
    const mr = body.object_attributes
    if (!isPlainObject(mr) || !GITLAB_ACTIONS.has(str(mr.action))) return null
    const last = isPlainObject(mr.last_commit) ? mr.last_commit : {}
    const number = Number(mr.iid)
    if (!Number.isSafeInteger(number) || number < 1 || !SHA.test(str(last.id))) return null
    const source = mr.source_project_id
    return {
      fromFork: source === undefined || source !== mr.target_project_id,
      forge: 'gitlab',
      number,
      headSha: str(last.id),
      baseBranch: str(mr.target_branch),
      title: str(mr.title).slice(0, 200),
      headRef: `refs/merge-requests/${number}/head`,
    }
  }
  return null
}
