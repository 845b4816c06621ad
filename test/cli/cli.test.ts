// The CLI as people use it: --help everywhere, usage errors exit 2, tokens created, listed and
// revoked beside a running server (honoured within one second), `init`, and `test` / `validate`
// over the template repository.
import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import t from 'tap'
import { createEngineRegistry } from '../../src/engine/registry.js'
import { startInProcess } from '../helpers/in-process.js'
import { tempDir } from '../helpers/rulekeeper.js'
import { sleep, waitFor } from '../helpers/wait.js'
import { runCli } from '../helpers/cli.js'

const TEMPLATE = path.resolve(import.meta.dirname, '../../rules-repo-template')

t.test('every command has --help; unknown commands and options exit 2', async (t) => {
  for (const args of [
    ['--help'],
    ['serve', '--help'],
    ['init', '--help'],
    ['token', '--help'],
    ['test', '--help'],
    ['validate', '--help'],
  ]) {
    const r = await runCli(args)
    t.equal(r.code, 0, args.join(' '))
    t.match(r.stdout, /Usage/, args.join(' '))
  }
  t.equal((await runCli(['frobnicate'])).code, 2)
  t.equal((await runCli(['token', 'create', '--bogus'])).code, 2)
  t.equal((await runCli(['token', 'create', '--name', 'x', '--permissions', 'Everything'])).code, 2)
  t.equal((await runCli([])).code, 2)
})

t.test('token create / list / revoke work beside a running server, honoured within a second', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const env = { RULEKEEPER_DATA_DIR: s.dataDir }
  const created = await runCli(['token', 'create', '--name', 'ci', '--permissions', 'ViewRules'], env)
  t.equal(created.code, 0, created.stderr)
  const secret = created.stdout.trim().split('\n').pop()!
  t.match(secret, /^rk_\w+_[\w-]+$/)
  const status = async () => (await s.send('GET', '/simple-rules', undefined, { 'X-API-Key': secret })).status
  await waitFor('the new token honoured', async () => (await status()) === 200, 1000, 50).catch(() => {})
  t.equal(await status(), 200, 'honoured within a second')
  t.equal((await s.send('DELETE', '/simple-rules/x', undefined, { 'X-API-Key': secret })).status, 403)

  const list = await runCli(['token', 'list', '--json'], env)
  t.equal(list.code, 0)
  const tokens = JSON.parse(list.stdout) as Array<{ id: string; name: string; permissions: string[] }>
  const ci = tokens.find((x) => x.name === 'ci')!
  t.same(ci.permissions, ['View Rules'])
  t.notMatch(list.stdout, secret)
  t.notMatch(fs.readFileSync(path.join(s.dataDir, 'tokens.json'), 'utf8'), secret, 'only hashes are stored')

  t.equal((await runCli(['token', 'revoke', ci.id], env)).code, 0)
  await waitFor('the revocation honoured', async () => (await status()) === 401, 1000, 50).catch(() => {})
  t.equal(await status(), 401, 'revoked within a second')
  t.equal((await runCli(['token', 'revoke', ci.id], env)).code, 1)

  const expiring = await runCli(
    ['token', 'create', '--name', 'short', '--permissions', 'ViewRules', '--expires-in', '1s'],
    env,
  )
  const short = expiring.stdout.trim().split('\n').pop()!
  // wait: its expiry (1 s after its creation) must pass
  await sleep(1500)
  t.equal((await s.send('GET', '/simple-rules', undefined, { 'X-API-Key': short })).status, 401, 'expired')
})

t.test('a second server on the same data directory refuses to start', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const second = await runCli(['serve'], { RULEKEEPER_DATA_DIR: s.dataDir, RULEKEEPER_PORT: '0' })
  t.equal(second.code, 1)
  t.match(second.stderr, /in use by another rulekeeper server \(pid \d+\)/)
  t.equal((await s.send('GET', '/healthz')).status, 200, 'the first server keeps serving')
})

t.test('init creates a repository holding the template, checked out or bare', async (t) => {
  const dir = tempDir('rk-init-')
  const r = await runCli(['init', path.join(dir, 'rules')])
  t.equal(r.code, 0, r.stderr)
  t.ok(fs.existsSync(path.join(dir, 'rules/simple_rules/editor/Editor.Audit.LoginFailed.yml')))
  t.match(
    execFileSync('git', ['-C', path.join(dir, 'rules'), 'log', '--format=%s'], { encoding: 'utf8' }),
    /Initialize rules repository/,
  )
  const bare = await runCli(['init', path.join(dir, 'rules.git')])
  t.equal(bare.code, 0, bare.stderr)
  t.match(
    execFileSync('git', ['--git-dir', path.join(dir, 'rules.git'), 'ls-tree', '-r', '--name-only', 'HEAD'], {
      encoding: 'utf8',
    }),
    /correlation_rules\/editor/,
  )
  t.equal((await runCli(['init', path.join(dir, 'rules')])).code, 1, 'refuses an existing repository')
})

t.test('validate and test over the template repository', async (t) => {
  const v = await runCli(['validate', TEMPLATE, '--json'])
  t.equal(v.code, 0, v.stdout + v.stderr)
  const report = JSON.parse(v.stdout)
  t.equal(report.summary.rules, 6, 'five rules and the scheduled query')
  t.equal(report.summary.invalid, 0)
  const run = await runCli(['test', TEMPLATE, '--json'])
  const tr = JSON.parse(run.stdout)
  t.equal(tr.summary.tests, 3 + 2 + 3 + 4 + 4)
  const engines = createEngineRegistry()
  if (engines.scheduled) {
    t.equal(run.code, 0, run.stdout)
    t.equal(tr.summary.passed, tr.summary.tests)
  } else {
    t.equal(run.code, 1, 'scheduled tests could not run: exit 1')
    t.equal(tr.summary.notRun, 4)
    t.equal(tr.summary.passed, tr.summary.tests - 4)
    const sched = tr.rules.find((r: { kind: string }) => r.kind === 'scheduled')
    t.equal(sched.tests[0].passed, null)
    t.match(sched.tests[0].error, /not available/)
  }
  const human = await runCli(['test', TEMPLATE, '--kind', 'simple'])
  t.equal(human.code, 0)
  t.match(human.stdout, /\[PASS\] Editor\.Audit\.LoginFailed: failed web login/)
})

t.test('validate reports an invalid file with line and column and exits 1', async (t) => {
  const dir = tempDir('rk-validate-')
  fs.cpSync(TEMPLATE, dir, { recursive: true })
  fs.writeFileSync(
    path.join(dir, 'simple_rules/editor/broken.yml'),
    'AnalysisType: rule\nRuleID: Broken.Rule\nEnabled: true\nSeverity: Loud\nLogTypes: [X]\nDetection:\n  - KeyPath: a\n    Condition: Equals\n    Value: 1\nColour: red\n',
  )
  const v = await runCli(['validate', dir, '--json'])
  t.equal(v.code, 1)
  const broken = JSON.parse(v.stdout).rules.find((r: { path: string }) => r.path.endsWith('broken.yml'))
  t.equal(broken.valid, false)
  const colour = broken.errors.find((e: { message: string }) => /Colour/.test(e.message))
  t.equal(colour.line, 10)
  t.equal(colour.column, 1)
  t.ok(
    broken.errors.some(
      (e: { message: string; line: number; column: number }) =>
        /Severity/.test(e.message) && e.line === 4 && e.column === 1,
    ),
  )
})

t.test('test without python3 on PATH: the scheduled tests are reported not run and the exit code is 1', async (t) => {
  const r = await runCli(['test', TEMPLATE, '--json'], { PATH: tempDir('rk-nopath-') })
  t.equal(r.code, 1, r.stderr)
  const report = JSON.parse(r.stdout)
  const sched = report.rules.find((x: { kind: string }) => x.kind === 'scheduled')
  t.ok(sched.tests.length > 0)
  for (const test of sched.tests) {
    t.equal(test.passed, null, 'never a pass')
    t.match(test.error, /python3/)
  }
  t.equal(report.summary.notRun, sched.tests.length)
  t.equal(report.summary.failed, 0)
})
