// Pull-request checks: a GitHub pull_request event on /hooks/git (signed) makes the service fetch
// the request's head from the real smart-HTTP remote (refs/pull/N/head), plan it against the served
// branch, and post commit statuses to a local HTTP server speaking GitHub's statuses API (pending,
// then failure for a change that breaks a test, with the plan's summary and link); a request into
// another branch and a closed one are not planned; the forge token reaches the forge only. GitLab's
// and Gitea's request shapes and event forms are pinned without a server.
// Real port: a remote (the git server) and the forge's API.
import http from 'node:http'
import t from 'tap'
import { statusRequest } from '../../src/plans/commit-status.js'
import { pullRequestEvent } from '../../src/plans/pull-request-event.js'
import { httpRequest } from '../helpers/rulekeeper.js'
import { hubSignature, remoteWorld, WEBHOOK_SECRET, waitFor } from '../remote/remote-fixture.js'
import { failingRule } from './fixtures.js'

const FORGE_TOKEN = 'ghp_FORGE_TOKEN_0123456789abcdef'

interface Seen {
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  body: any
}

async function startForge(t: { teardown(fn: () => unknown): void }) {
  const seen: Seen[] = []
  const server = http.createServer((req, res) => {
    let text = ''
    req.on('data', (d) => {
      text += d
    })
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: JSON.parse(text || 'null'),
      })
      res.writeHead(201, { 'Content-Type': 'application/json' })
      res.end('{"id":1}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => server.close(resolve)))
  const port = (server.address() as { port: number }).port
  return { url: `http://127.0.0.1:${port}`, seen }
}

function hook(url: string, event: string, payload: unknown, delivery: string) {
  const body = JSON.stringify(payload)
  return httpRequest(url, 'POST', '/hooks/git', body, {
    'Content-Type': 'application/json',
    'X-GitHub-Event': event,
    'X-GitHub-Delivery': delivery,
    'X-Hub-Signature-256': hubSignature(WEBHOOK_SECRET, body),
  })
}

t.test('a pull request is fetched, planned and reported as a commit status', async (t) => {
  t.setTimeout(180_000)
  const forge = await startForge(t)
  const w = await remoteWorld(t)
  const logLines: string[] = []
  const s = await w.startServer({
    env: { RULEKEEPER_FORGE_TOKEN: FORGE_TOKEN },
    config: {
      plans: {
        checks: { forge: 'github', apiUrl: forge.url, repository: 'example/rules', linkUrl: 'https://rk.example' },
      },
    },
    logLines,
  })
  const person = await w.clone({ name: 'Pat', email: 'pat@example.com' })
  person.write('simple_rules/pr/PR.Failing.yml', failingRule('PR.Failing'))
  const head = await person.commitAll('a rule whose test fails')
  const pushed = await person.run('push', '-q', 'origin', 'HEAD:refs/pull/7/head')
  t.equal(pushed.code, 0, pushed.stderr)
  const main = s.git('rev-parse', 'refs/heads/main').trim()

  const payload = (action: string, base = 'main') => ({
    action,
    number: 7,
    pull_request: {
      number: 7,
      title: 'Add PR.Failing',
      head: { sha: head, ref: 'feature', repo: { full_name: 'example/rules' } },
      base: { ref: base, repo: { full_name: 'example/rules' } },
    },
    repository: { full_name: 'example/rules' },
  })
  const accepted = await hook(s.url, 'pull_request', payload('opened'), 'pr-1')
  t.equal(accepted.status, 202, accepted.text)
  t.match(accepted.body.message, /check of pull request #7 at .* scheduled/)
  await waitFor('two statuses', async () => (forge.seen.length >= 2 ? true : undefined), 120_000, 100)

  const [pending, final] = forge.seen
  for (const r of [pending!, final!]) {
    t.equal(r.method, 'POST')
    t.equal(r.url, `/repos/example/rules/statuses/${head}`)
    t.equal(r.headers.authorization, `Bearer ${FORGE_TOKEN}`)
    t.equal(r.headers.accept, 'application/vnd.github+json')
    t.equal(r.body.context, 'rulekeeper/plan')
  }
  t.match(pending!.body, { state: 'pending' })
  t.match(final!.body, { state: 'failure', description: /tests: .*1 failed/ })
  const planId = /\/plans\/(plan_[0-9a-f]+)$/.exec(final!.body.target_url)?.[1]
  t.ok(planId, `linked: ${final!.body.target_url}`)
  t.match(final!.body.target_url, /^https:\/\/rk\.example\/#\/plans\/plan_[0-9a-f]+$/, 'the console’s plan page')
  const plan = await s.request('GET', `/plans/${planId}`)
  t.equal(plan.status, 200)
  t.match(plan.body, { base: main, head, status: 'fail', rules: { added: [{ id: 'PR.Failing' }] } })
  // Nothing of the request is served: main still is.
  t.equal(s.server.catalog.index.revision, main)
  t.equal((await s.request('GET', '/simple-rules/PR.Failing')).status, 404)

  // Into another branch, or closed: acknowledged, not planned.
  const other = await hook(s.url, 'pull_request', payload('opened', 'release'), 'pr-2')
  t.match(other.body.message, /targets release, not the served branch main: not planned/)
  const fork = payload('opened')
  fork.pull_request.head.repo.full_name = 'mallory/rules'
  const fromFork = await hook(s.url, 'pull_request', fork, 'pr-4')
  t.match(fromFork.body.message, /comes from another repository: not planned \(plans.checks.forks is off\)/)
  const closed = await hook(s.url, 'pull_request', payload('closed'), 'pr-3')
  t.match(closed.body.message, /not a pull request opened or updated/)
  t.equal(forge.seen.length, 2, 'no other status was posted')
  t.notOk(logLines.join('\n').includes(FORGE_TOKEN), 'the forge token is never logged')
})

t.test('GitLab and Gitea: their events and status requests', async (t) => {
  const sha = 'a'.repeat(40)
  const gitlab = pullRequestEvent((h) => (h === 'X-Gitlab-Event' ? 'Merge Request Hook' : ''), {
    object_attributes: { iid: 12, action: 'update', target_branch: 'main', title: 'T', last_commit: { id: sha } },
  })
  t.same(gitlab, {
    fromFork: true,
    forge: 'gitlab',
    number: 12,
    headSha: sha,
    baseBranch: 'main',
    title: 'T',
    headRef: 'refs/merge-requests/12/head',
  })
  const gitea = pullRequestEvent((h) => (h === 'X-Gitea-Event' ? 'pull_request' : ''), {
    action: 'synchronized',
    number: 3,
    pull_request: { number: 3, head: { sha }, base: { ref: 'main' }, title: 'U' },
  })
  t.match(
    gitea,
    { forge: 'gitea', number: 3, headRef: 'refs/pull/3/head', fromFork: true },
    'no repositories named: a fork',
  )
  t.match(gitlab, { fromFork: true }, 'no project ids: a fork')
  t.match(
    pullRequestEvent((h) => (h === 'X-Gitlab-Event' ? 'Merge Request Hook' : ''), {
      object_attributes: {
        iid: 1,
        action: 'open',
        source_project_id: 5,
        target_project_id: 5,
        last_commit: { id: sha },
      },
    }),
    { fromFork: false },
  )
  t.equal(
    pullRequestEvent(() => 'pull_request', { action: 'opened', pull_request: { number: 1, head: { sha: 'x' } } }),
    null,
    'no head commit',
  )

  const gl = statusRequest(
    { forge: 'gitlab', apiUrl: 'https://gl.example/api/v4/', repository: 'team/rules' },
    'tok',
    sha,
    'failure',
    'd',
    'https://l',
  )
  t.same(gl, {
    url: `https://gl.example/api/v4/projects/team%2Frules/statuses/${sha}`,
    headers: { 'PRIVATE-TOKEN': 'tok' },
    body: { state: 'failed', name: 'rulekeeper/plan', description: 'd', target_url: 'https://l' },
  })
  const gt = statusRequest(
    { forge: 'gitea', apiUrl: 'https://gitea.example/api/v1', repository: 'o/r' },
    'tok',
    sha,
    'success',
    'x'.repeat(200),
    null,
  )
  t.equal(gt.url, `https://gitea.example/api/v1/repos/o/r/statuses/${sha}`)
  t.same(gt.headers, { Authorization: 'token tok' })
  t.equal((gt.body.description as string).length, 140, 'a description is cut at 140 characters')
})
