// With a remote: API writes reach the remote before they are acknowledged (rebuilt on a moved tip,
// no merges); a bad or missing webhook signature is a 401 that runs nothing (no request reaches the
// git server), and a right GitLab token triggers a run. (Merged pull requests: merged-pr.*.ts.)
// Real port: a remote (the git server).
import t from 'tap'
import { httpRequest, SAMPLE_BODIES } from '../helpers/rulekeeper.js'
import {
  hubSignature,
  remoteWorld,
  simplePath,
  simpleRuleYaml,
  sleep,
  waitApplied,
  WEBHOOK_SECRET,
} from './remote-fixture.js'

const erin = { name: 'Erin Merger', email: 'erin@example.com' }

t.test(
  'API writes are pushed to the remote before they are acknowledged, rebuilt on a moved tip without merges',
  async (t) => {
    t.setTimeout(120_000)
    const w = await remoteWorld(t)
    const s = await w.startServer()
    const before = await w.remote.head()

    const created = await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('Api.Pushed'), {
      'X-Change-Reason': 'pushed on write',
    })
    t.equal(created.status, 200, created.text)
    const tip1 = await w.remote.head()
    t.not(tip1, before, 'the remote moved before the 200')
    t.equal((await w.remote.git('rev-parse', `${tip1}^`)).trim(), before, 'one commit on top of the previous tip')
    const msg = await w.remote.git('log', '-1', '--format=%s%n%b', tip1)
    t.match(msg, /^Create simple rule Api\.Pushed\n/)
    t.match(msg, /pushed on write/)
    t.match(msg, /^Rule-Id: Api\.Pushed$/m)
    t.match(msg, /^Actor-Type: api-token$/m)
    t.equal(s.git('rev-parse', 'refs/heads/main').trim(), tip1, 'local and remote agree')

    // Someone pushes to the remote; the service has not heard of it (no webhook) when the next write comes.
    const c = await w.clone(erin)
    c.write(simplePath('Plain.Pushed'), simpleRuleYaml('Plain.Pushed'))
    const plain = await c.commitAll('Add Plain.Pushed')
    t.ok((await c.push()).ok)

    const updated = await s.request(
      'PUT',
      '/simple-rules/Api.Pushed',
      SAMPLE_BODIES.simple('Api.Pushed', { severity: 'LOW' }),
    )
    t.equal(updated.status, 200, updated.text)
    const tip2 = await w.remote.head()
    t.equal((await w.remote.git('rev-parse', `${tip2}^`)).trim(), plain, 'the write was rebuilt on the pushed commit')
    t.equal((await w.remote.git('rev-list', '--merges', '--count', tip2)).trim(), '0', 'no merge commits')
    t.match(await w.remote.git('log', '-1', '--format=%s', tip2), /^Update simple rule Api\.Pushed/)
    t.equal(
      await w.remote.git('show', `${tip2}:${simplePath('Plain.Pushed')}`),
      simpleRuleYaml('Plain.Pushed'),
      'the pushed file is intact',
    )
    const plainRule = await s.request('GET', '/simple-rules/Plain.Pushed')
    t.equal(plainRule.status, 200, 'the index follows the commit it is on, which includes the plain push')

    const deleted = await s.request('DELETE', '/simple-rules/Api.Pushed')
    t.equal(deleted.status, 204)
    const tip3 = await w.remote.head()
    t.equal((await w.remote.git('rev-parse', `${tip3}^`)).trim(), tip2)
    t.match(await w.remote.git('log', '-1', '--format=%s', tip3), /^Delete simple rule Api\.Pushed/)
  },
)

t.test('a webhook with a bad or missing signature is 401 and triggers no run', async (t) => {
  t.setTimeout(120_000)
  const w = await remoteWorld(t)
  const s = await w.startServer()
  const c = await w.clone(erin)
  c.write(simplePath('Unsigned.Rule'), simpleRuleYaml('Unsigned.Rule'))
  const pushed = await c.commitAll('Add Unsigned.Rule')
  t.ok((await c.push()).ok)

  const before = (await s.request('GET', '/status')).body
  const requestsBefore = w.git.requests
  const body = JSON.stringify({ ref: 'refs/heads/main', after: pushed })
  const attempts: Array<[string, Record<string, string>, string]> = [
    ['signed with another secret', { 'X-Hub-Signature-256': hubSignature('not-the-secret', body) }, body],
    ['no signature at all', {}, body],
    ['signature of another body', { 'X-Hub-Signature-256': hubSignature(WEBHOOK_SECRET, `${body} `) }, body],
    ['malformed signature', { 'X-Hub-Signature-256': 'sha256=zz' }, body],
    ['sha1 signature only', { 'X-Hub-Signature': `sha1=${'a'.repeat(40)}` }, body],
    ['wrong GitLab token', { 'X-Gitlab-Token': 'nope' }, body],
  ]
  for (const [what, headers, b] of attempts) {
    const res = await httpRequest(s.url, 'POST', '/hooks/git', b, {
      'Content-Type': 'application/json',
      'X-GitHub-Event': 'push',
      ...headers,
    })
    t.equal(res.status, 401, `${what}: 401`)
    t.type(res.body?.message, 'string', `${what}: a message`)
  }
  await sleep(1500) // wait: no fetch reaches the git server within 1.5 s
  t.equal(w.git.requests, requestsBefore, 'no fetch reached the git server')
  const after = (await s.request('GET', '/status')).body
  t.same(after.lastRun, before.lastRun, 'no run happened')
  t.equal(after.lastAttemptedRevision, before.lastAttemptedRevision)
  t.equal((await s.request('GET', '/simple-rules/Unsigned.Rule')).status, 404)

  // The GitLab form with the right token does trigger a run.
  const gl = await httpRequest(s.url, 'POST', '/hooks/git', body, {
    'Content-Type': 'application/json',
    'X-Gitlab-Event': 'Push Hook',
    'X-Gitlab-Token': WEBHOOK_SECRET,
  })
  t.equal(gl.status, 202, gl.text)
  await waitApplied(s, pushed)
  t.equal((await s.request('GET', '/simple-rules/Unsigned.Rule')).status, 200)
})
