// Plans (POST /plans, GET /plans/{id}, `rulekeeper plan`): a change on a branch of the served
// repository, planned against main — files and rules added, changed, removed and invalid (with their
// line), the tests of changed and added rules (a failing one fails the plan), a correlation member
// removed as a broken reference, and a backtest whose counts are those of a replay of the same rule at
// each revision; permissions, bad input, samples only for View Alerts, and the CLI's exit codes.
import { spawnSync } from 'node:child_process'
import t from 'tap'
import { commandRecord, commandRule, DETECT_ENV, sendAndDetect } from '../detect/helpers.js'
import { runCli } from '../helpers/cli.js'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'
import { tempDir } from '../helpers/rulekeeper.js'
import { failingRule } from './fixtures.js'

const gitEnv = { ...process.env, GIT_COMMITTER_NAME: 'Pat', GIT_COMMITTER_EMAIL: 'pat@example.com' }

/** One commit on `branch` (from main's tip) writing `files` (path → text, null: delete). */
function branchCommit(s: InProcessServer, branch: string, files: Record<string, string | null>): string {
  const from = s.git('rev-parse', 'main').trim()
  const input = [
    `commit refs/heads/${branch}\ncommitter Pat <pat@example.com> 1700000000 +0000\ndata 6\nchange\nfrom ${from}\n`,
    ...Object.entries(files).map(([p, text]) =>
      text === null ? `D ${p}\n` : `M 100644 inline ${p}\ndata ${Buffer.byteLength(text)}\n${text}\n`,
    ),
  ].join('')
  const r = spawnSync('git', ['--git-dir', s.gitdir, 'fast-import', '--quiet'], { input, env: gitEnv })
  if (r.status !== 0) throw new Error(`fast-import: ${r.stderr}`)
  return s.git('rev-parse', `refs/heads/${branch}`).trim()
}

t.test('a plan of a branch: rules, invalid files, failing tests, broken references, backtest as replay', async (t) => {
  const dataDir = tempDir('rk-plan-')
  const s = await startInProcess({ dataDir, env: DETECT_ENV })
  t.teardown(() => s.close())
  await commandRule(s, 'Plan.Cmd', 'deploy')
  const path = 'simple_rules/plan/Plan.Cmd.yml'
  const text = s.git('show', `main:${path}`)
  t.match(text, /Value: deploy/)
  // Stored events of the last hour: 5 deploys by 5 people, 3 builds.
  const at = (i: number) => new Date(Date.now() - 3_600_000 + i * 1000).toISOString()
  await sendAndDetect(s, [
    ...Array.from({ length: 5 }, (_, i) => commandRecord('pl', 'deploy', at(i), { user_email: `u${i}@example.com` })),
    ...Array.from({ length: 3 }, (_, i) => commandRecord('pl', 'build', at(10 + i))),
  ])

  // The change: Plan.Cmd now matches builds; a new rule whose test fails; a broken file; a
  // correlation member removed.
  const head = branchCommit(s, 'pr-1', {
    [path]: text.replace('Value: deploy', 'Value: build'),
    'simple_rules/plan/Plan.Failing.yml': failingRule('Plan.Failing'),
    'simple_rules/plan/Broken.yml': 'AnalysisType: rule\nRuleID: Plan.Broken\nSeverity: [oops\n',
    'simple_rules/editor/Editor.Audit.LoginFailed.yml': null,
  })
  const base = s.git('rev-parse', 'main').trim()
  const made = await s.request('POST', '/plans', { base: 'main', head: 'pr-1' })
  t.equal(made.status, 201, made.text.slice(0, 500))
  const plan = made.body
  t.match(made.headers.get('location'), new RegExp(`/plans/${plan.id}$`))
  t.match(plan, { base, head, status: 'fail' })
  t.same(plan.files.added.sort(), ['simple_rules/plan/Broken.yml', 'simple_rules/plan/Plan.Failing.yml'])
  t.same(plan.files.changed, [path])
  t.same(plan.files.removed, ['simple_rules/editor/Editor.Audit.LoginFailed.yml'])
  t.match(plan.files.invalid, [
    { path: 'simple_rules/plan/Broken.yml', errors: [{ line: 4, message: /Flow sequence/ }] },
  ])
  t.same(
    plan.rules.changed.map((r: { id: string }) => r.id),
    ['Plan.Cmd'],
  )
  t.same(
    plan.rules.added.map((r: { id: string }) => r.id),
    ['Plan.Failing'],
  )
  t.same(
    plan.rules.removed.map((r: { id: string }) => r.id),
    ['Editor.Audit.LoginFailed'],
  )
  t.match(plan.rules.affected, [{ id: 'Editor.Audit.BruteForceThenSuccess', because: /Editor.Audit.LoginFailed/ }])
  t.match(plan.tests, [
    { ruleId: 'Plan.Failing', passed: false, results: [{ name: 'expects a match it will not get', passed: false }] },
    { ruleId: 'Editor.Audit.BruteForceThenSuccess' },
  ])
  t.match(plan.brokenReferences, [
    { ruleId: 'Editor.Audit.BruteForceThenSuccess', message: /Editor.Audit.LoginFailed/ },
  ])
  // The served rules are main's still.
  t.equal(s.server.catalog.index.revision, base)
  t.notOk(s.server.catalog.index.rules.has('Plan.Failing'), 'a plan serves nothing of its head')
  t.ok(s.server.catalog.index.rules.has('Editor.Audit.LoginFailed'))
  t.equal((await s.request('GET', '/simple-rules/Plan.Failing')).status, 404)
  t.match(plan.summary, /1 rule\(s\) changed, 1 added, 1 removed, 1 affected; 1 invalid file\(s\); tests: .*1 failed/)

  // The backtest is a replay of the rule at each revision over the same window.
  const cmd = plan.backtest.rules.find((r: { ruleId: string }) => r.ruleId === 'Plan.Cmd')
  t.ok(cmd, 'Plan.Cmd is backtested')
  const replayAt = async (revision: string) => {
    const r = await s.request('POST', '/replay', {
      ruleIds: ['Plan.Cmd'],
      from: plan.backtest.from,
      to: plan.backtest.to,
      revision,
    })
    t.equal(r.status, 200, r.text.slice(0, 300))
    const counts = r.body.rules.find((x: { ruleId: string }) => x.ruleId === 'Plan.Cmd')
    return { matches: counts.matches, alerts: counts.alerts, errors: counts.errors }
  }
  t.same(cmd.base, await replayAt(base), 'the base side is a replay at the base')
  t.same(cmd.head, await replayAt(head), 'the head side is a replay at the head')
  t.same([cmd.base.matches, cmd.head.matches], [5, 3], 'deploys before, builds after')
  t.ok(cmd.samples.head.length > 0, 'samples for a token with View Alerts')
  t.match(cmd.samples.head[0], { severity: 'HIGH', eventCount: Number })
  t.match(
    plan.backtest.rules.find((r: { ruleId: string }) => r.ruleId === 'Editor.Audit.LoginFailed'),
    {
      head: null,
      base: { matches: 0 },
    },
  )

  // Read again by id; View Rules reads without samples; only Manage Rules makes one.
  const again = await s.request('GET', `/plans/${plan.id}`)
  t.equal(again.status, 200)
  t.same(again.body, plan, 'stored as answered')
  const viewer = await s.makeToken('viewer', ['View Rules'])
  const seen = await s.send('GET', `/plans/${plan.id}`, undefined, { 'X-API-Key': viewer })
  t.equal(seen.status, 200)
  t.same(seen.body.backtest.rules.find((r: { ruleId: string }) => r.ruleId === 'Plan.Cmd').samples, {
    base: [],
    head: [],
  })
  t.equal((await s.send('POST', '/plans', { base: 'main', head: 'pr-1' }, { 'X-API-Key': viewer })).status, 403)
  t.equal((await s.send('GET', `/plans/${plan.id}`)).status, 401)
  t.equal((await s.request('GET', '/plans/plan_000000000000000000000000')).status, 404)
  t.equal((await s.request('GET', '/plans/..%2F..%2Ftokens')).status, 404)

  // Bad input: a clear 400 at the field.
  const unknown = await s.request('POST', '/plans', { base: 'main', head: 'no-such-branch' })
  t.equal(unknown.status, 400)
  t.match(unknown.body.errors, [{ path: '/head', message: /no commit or branch no-such-branch/ }])
  // A name that is a folder of refs is no revision (a 400, not a 500).
  const folder = await s.request('POST', '/plans', { base: 'main', head: 'refs/heads' })
  t.equal(folder.status, 400, folder.text)
  t.match(folder.body.errors, [{ path: '/head' }])
  const bad = await s.request('POST', '/plans', { base: '../x', head: 'pr-1', backtestDays: 99, extra: 1 })
  t.equal(bad.status, 400)
  t.same(bad.body.errors.map((e: { path: string }) => e.path).sort(), ['/backtestDays', '/base', '/extra'])

  // A change that only changes Plan.Cmd passes; the CLI says so by its exit code.
  branchCommit(s, 'pr-2', { [path]: text.replace('Value: deploy', 'Value: build') })
  const passing = await s.request('POST', '/plans', { base: 'main', head: 'pr-2' })
  t.equal(passing.status, 201)
  t.match(passing.body, {
    status: 'pass',
    backtest: { rules: [{ ruleId: 'Plan.Cmd', base: { matches: 5 }, head: { matches: 3 } }] },
  })
  const none = await s.request('POST', '/plans', { base: 'main', head: 'pr-2', backtestDays: 0 })
  t.match(none.body.backtest, { rules: [], skipped: 'backtestDays is 0' })
  const cliPass = await runCli(
    ['plan', '--repo', s.gitdir, '--base', 'main', '--head', 'pr-2', '--data-dir', dataDir],
    {
      RULEKEEPER_DATA_DIR: dataDir,
    },
  )
  t.equal(cliPass.code, 0, cliPass.stderr)
  t.match(cliPass.stdout, /: pass\n.*backtest Plan\.Cmd: 1 alerts → 1 alerts/s)
  const cliFail = await runCli(['plan', '--base', 'main', '--head', 'pr-1', '--json', '--data-dir', dataDir], {
    RULEKEEPER_DATA_DIR: dataDir,
  })
  t.equal(cliFail.code, 1, cliFail.stderr)
  t.match(JSON.parse(cliFail.stdout), { status: 'fail', head })
})
