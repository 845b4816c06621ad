// With a remote: a plain push there (a merged pull request) is served after a signed push webhook,
// with the git author as createdBy/lastModifiedBy from the first moment it is served, and the commit
// in the local `git log` exactly as pushed.
// Real port: a remote (the git server).
import t from 'tap'
import { condition, pushHook, remoteWorld, simplePath, simpleRuleYaml, waitApplied } from './remote-fixture.js'

const erin = { name: 'Erin Merger', email: 'erin@example.com' }

t.test('a merged pull request is served after the signed webhook, authored by the person who pushed it', async (t) => {
  t.setTimeout(120_000)
  const w = await remoteWorld(t)
  const s = await w.startServer()
  const first = await w.remote.head()

  const st0 = await s.request('GET', '/status')
  t.equal(st0.status, 200)
  t.equal(st0.body.lastAppliedRevision, first, 'the remote tip is applied at start')
  t.equal(st0.body.remote?.url, w.git.url('rules'), 'the remote URL, without credentials')
  t.equal(st0.body.remote?.branch, 'main')
  t.equal(st0.body.remote?.reachable, true)
  t.equal(s.git('rev-parse', 'refs/heads/main').trim(), first, 'the local copy follows the remote')

  const c = await w.clone(erin)
  c.write(simplePath('Merged.Rule'), simpleRuleYaml('Merged.Rule', 'came in through a pull request'))
  const login = 'simple_rules/editor/Editor.Audit.LoginFailed.yml'
  c.write(login, c.read(login)!.replace(/^Description: .*$/m, 'Description: reworded in the pull request'))
  const merged = await c.commitAll('Merge pull request #7 from erin/merged-rule', '2026-03-04T05:06:07Z')
  const pushed = await c.push()
  t.ok(pushed.ok, pushed.stderr)
  t.equal((await s.request('GET', '/simple-rules/Merged.Rule')).status, 404, 'nothing is served before the webhook')

  // Readers watch from the webhook on: the rule must never be served without its history metadata.
  const seen: Array<{ createdBy: unknown; createdAt: unknown }> = []
  let watching = true
  const watcher = (async () => {
    for (let n = 0; watching && n < 5000; n++) {
      const r = await s.request('GET', '/simple-rules/Merged.Rule')
      if (r.status === 200) seen.push({ createdBy: r.body.createdBy, createdAt: r.body.createdAt })
    }
  })()
  const hook = await pushHook(s, merged)
  t.equal(hook.status, 202, hook.text)
  const st = await waitApplied(s, merged)
  watching = false
  await watcher
  const placeholders = seen.filter(
    (v) => (v.createdBy as { id?: string })?.id !== erin.email || v.createdAt !== '2026-03-04T05:06:07.000Z',
  )
  t.same(
    placeholders.slice(0, 3),
    [],
    `every served version carries the commit's author and time (${placeholders.length} of ${seen.length} did not)`,
  )
  t.equal(st.lastAttemptedRevision, merged)
  t.equal(condition(st, 'Stalled')?.status, 'False')
  t.equal(condition(st, 'Ready')?.status, 'True')
  t.same(st.invalidFiles, [])

  const rule = await s.request('GET', '/simple-rules/Merged.Rule')
  t.equal(rule.status, 200, rule.text)
  t.equal(rule.body.description, 'came in through a pull request')
  t.same(rule.body.createdBy, { id: erin.email, type: 'user' })
  t.same(rule.body.lastModifiedBy, { id: erin.email, type: 'user' })
  t.equal(rule.body.createdAt, '2026-03-04T05:06:07.000Z')
  t.equal(rule.body.lastModified, '2026-03-04T05:06:07.000Z')

  const edited = await s.request('GET', '/simple-rules/Editor.Audit.LoginFailed')
  t.equal(edited.status, 200)
  t.equal(edited.body.description, 'reworded in the pull request')
  t.same(edited.body.createdBy, { id: 'template@example.com', type: 'user' }, 'created by the remote’s first commit')
  t.same(edited.body.lastModifiedBy, { id: erin.email, type: 'user' })

  // git log shows the commit exactly as pushed: same id, author, message; no commit of the service on top.
  t.equal(s.git('rev-parse', 'refs/heads/main').trim(), merged)
  t.equal(
    s.git('log', '-1', '--format=%H|%an <%ae>|%at|%s', 'refs/heads/main').trim(),
    `${merged}|Erin Merger <erin@example.com>|${Date.parse('2026-03-04T05:06:07Z') / 1000}|Merge pull request #7 from erin/merged-rule`,
  )
  t.equal(await w.remote.head(), merged)
})
