// A plan compares the head with its merge base, as a pull request shows its change: a rule the base
// branch gained after the head branched is not "removed" by the head, and the plan names the commit
// it compared with (`mergeBase`) beside the base as asked.
import { spawnSync } from 'node:child_process'
import t from 'tap'
import { commandRule, DETECT_ENV } from '../detect/helpers.js'
import { startInProcess } from '../helpers/in-process.js'
import { tempDir } from '../helpers/rulekeeper.js'

const gitEnv = { ...process.env, GIT_COMMITTER_NAME: 'Pat', GIT_COMMITTER_EMAIL: 'pat@example.com' }

t.test('a branch planned against a base that moved on: only the branch change', async (t) => {
  const s = await startInProcess({ dataDir: tempDir('rk-plan-mb-'), env: DETECT_ENV })
  t.teardown(() => s.close())
  await commandRule(s, 'Mb.Deploy', 'deploy')
  const path = 'simple_rules/mb/Mb.Deploy.yml'
  const text = s.git('show', `main:${path}`)
  const branchedFrom = s.git('rev-parse', 'main').trim()
  const input = `commit refs/heads/pr-mb\ncommitter Pat <pat@example.com> 1700000000 +0000\ndata 6\nchange\nfrom ${branchedFrom}\nM 100644 inline ${path}\ndata ${Buffer.byteLength(text.replace('Value: deploy', 'Value: build'))}\n${text.replace('Value: deploy', 'Value: build')}\n`
  const r = spawnSync('git', ['--git-dir', s.gitdir, 'fast-import', '--quiet'], { input, env: gitEnv })
  t.equal(r.status, 0, String(r.stderr))
  const head = s.git('rev-parse', 'pr-mb').trim()
  // The base branch moves on after the branch was made: a new rule.
  await commandRule(s, 'Mb.Later', 'later')
  const base = s.git('rev-parse', 'main').trim()
  t.not(base, branchedFrom)

  const made = await s.request('POST', '/plans', { base: 'main', head: 'pr-mb' })
  t.equal(made.status, 201, made.text.slice(0, 500))
  t.match(made.body, { base, mergeBase: branchedFrom, head })
  t.same(made.body.files, { added: [], changed: [path], removed: [], invalid: [] })
  t.same(made.body.rules.removed, [], 'the rule the base gained later is not removed by the branch')
  t.same(
    made.body.rules.changed.map((x: { id: string }) => x.id),
    ['Mb.Deploy'],
  )

  // A head that is the base's descendant: the base itself is the merge base.
  const straight = await s.request('POST', '/plans', { base: branchedFrom, head: 'main' })
  t.equal(straight.status, 201, straight.text.slice(0, 500))
  t.match(straight.body, { base: branchedFrom, mergeBase: branchedFrom, head: base })
  t.same(
    straight.body.rules.added.map((x: { id: string }) => x.id),
    ['Mb.Later'],
  )
})
