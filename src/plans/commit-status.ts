// A plan's outcome reported to the forge as a commit status on the pull request's head: GitHub's
// statuses API (`POST /repos/{owner}/{repo}/statuses/{sha}`, `Authorization: Bearer`), Gitea's
// (the same path, `Authorization: token`), GitLab's commit status API
// (`POST /projects/{id}/statuses/{sha}`, `PRIVATE-TOKEN`). The token comes from the environment
// and is never logged; a forge that answers otherwise than 2xx is an error its caller logs.
import type { PullRequestEvent } from './pull-request-event.js'

export type CheckState = 'pending' | 'success' | 'failure' | 'error'

export interface ForgeSettings {
  forge: 'github' | 'gitea' | 'gitlab'
  /** The API's base URL (`https://api.github.com`, `https://gitea.example/api/v1`, `https://gitlab.example/api/v4`). */
  apiUrl: string
  /** `owner/name` (GitHub, Gitea) or the project's id or path (GitLab). */
  repository: string
}

/** The context name the status is shown under. */
export const CHECK_NAME = 'rulekeeper/plan'

/** One status: its URL, headers and JSON body, as the forge's API takes it. */
export function statusRequest(
  s: ForgeSettings,
  token: string,
  sha: string,
  state: CheckState,
  description: string,
  targetUrl: string | null,
): { url: string; headers: Record<string, string>; body: Record<string, unknown> } {
  const base = s.apiUrl.replace(/\/+$/, '')
  // Forges cut descriptions at 140 characters (GitHub) or 255 (GitLab): at most 140 here.
  const text = description.length > 140 ? `${description.slice(0, 139)}…` : description
  if (s.forge === 'gitlab')
    return {
      url: `${base}/projects/${encodeURIComponent(s.repository)}/statuses/${sha}`,
      headers: { 'PRIVATE-TOKEN': token },
      body: {
        state: state === 'failure' || state === 'error' ? 'failed' : state,
        name: CHECK_NAME,
        description: text,
        ...(targetUrl ? { target_url: targetUrl } : {}),
      },
    }
  const [owner, name] = s.repository.split('/').map(encodeURIComponent)
  return {
    url: `${base}/repos/${owner}/${name}/statuses/${sha}`,
    headers:
      s.forge === 'github'
        ? { Authorization: `Bearer ${token}`, Accept: 'application/vnd.github+json' }
        : { Authorization: `token ${token}` },
    body: { state, context: CHECK_NAME, description: text, ...(targetUrl ? { target_url: targetUrl } : {}) },
  }
}

/** Posts one status; rejects with the forge's answer (never the token) when it is not a 2xx. */
export async function postStatus(
  s: ForgeSettings,
  token: string,
  pr: Pick<PullRequestEvent, 'headSha'>,
  state: CheckState,
  description: string,
  targetUrl: string | null,
): Promise<void> {
  const req = statusRequest(s, token, pr.headSha, state, description, targetUrl)
  const res = await fetch(req.url, {
    method: 'POST',
    headers: { ...req.headers, 'Content-Type': 'application/json', 'User-Agent': 'rulekeeper' },
    body: JSON.stringify(req.body),
    signal: AbortSignal.timeout(15_000),
  })
  const text = (await res.text()).slice(0, 300)
  if (!res.ok)
    throw new Error(`the forge answered ${res.status} to the commit status: ${text.split(token).join('***')}`)
}
