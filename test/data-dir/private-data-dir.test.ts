// The data directory is private (issue 11): whoever runs the server and whatever umask it inherits,
// every directory under the data dir is 0700 and every file has no group/other bit (0600, or 0400
// for git's read-only objects) after the first start, after writes, after `rulekeeper token`, after
// ingesting audit records and after a plain `git push`; wider modes found at start are narrowed
// with one warn line.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { runCli } from '../helpers/cli.js'
import { entryModes, notPrivate } from '../helpers/modes.js'
import { startInProcess } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'
import { gitAs, PAT } from '../helpers/git-as.js'

/** An ordinary user's umask: what the server must not depend on. */
const wideUmask = () => process.umask(0o022)

t.test('a first start creates a private data directory', async (t) => {
  wideUmask()
  const dataDir = path.join(tempDir(), 'data')
  const s = await startInProcess({ dataDir })
  t.teardown(() => s.close())
  t.same(notPrivate(dataDir), [], 'every entry is private')
  t.equal(fs.statSync(dataDir).mode & 0o777, 0o700, 'the data directory is 0700')
  for (const f of ['tokens.json', 'bootstrap-token', 'server.lock', 'log-sources/editor-audit.token']) {
    t.equal(fs.statSync(path.join(dataDir, f)).mode & 0o777, 0o600, `${f} is 0600`)
  }
  t.equal(s.git('config', 'core.sharedRepository').trim(), '0600', 'plain git keeps the repository private too')
})

t.test('files written after the start stay private', async (t) => {
  wideUmask()
  const s = await startInProcess()
  t.equal((await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('Private.Write'))).status, 200)
  t.equal(
    (await s.request('PUT', '/simple-rules/Private.Write', SAMPLE_BODIES.simple('Private.Write', { severity: 'LOW' })))
      .status,
    200,
  )
  await s.makeToken('reader', ['View Rules'])
  await s.close() // writes the persisted index and the history cache
  t.ok(fs.existsSync(path.join(s.dataDir, 'cache')), 'the caches were written')
  t.same(notPrivate(s.dataDir), [])
})

t.test('rulekeeper token create keeps the data directory private, also when it creates it', async (t) => {
  wideUmask() // inherited by the CLI child
  const dataDir = path.join(tempDir(), 'fresh')
  const r = await runCli(['token', 'create', '--name', 'ci', '--permissions', 'ViewRules'], {
    RULEKEEPER_DATA_DIR: dataDir,
  })
  t.equal(r.code, 0, r.stderr)
  t.same(notPrivate(dataDir), [], 'the CLI created a private data directory')
  // The store is not empty, so no bootstrap token file: the helper takes this one instead.
  const s = await startInProcess({ dataDir, env: { RULEKEEPER_BOOTSTRAP_TOKEN: 'unused-bootstrap-secret' } })
  t.teardown(() => s.close())
  wideUmask()
  const again = await runCli(['token', 'create', '--name', 'ci2', '--permissions', 'ManageRules'], {
    RULEKEEPER_DATA_DIR: dataDir,
  })
  t.equal(again.code, 0, again.stderr)
  t.same(notPrivate(dataDir), [], 'beside a running server')
})

t.test('ingested audit records are stored privately', async (t) => {
  wideUmask()
  const s = await startInProcess()
  t.teardown(() => s.close())
  const token = fs.readFileSync(path.join(s.dataDir, 'log-sources/editor-audit.token'), 'utf8').trim()
  const record = (id: string) => ({
    ip_address: '198.51.100.7',
    team_id: '4821',
    user_email: 'dana@example.com',
    metadata: { id, timestamp: '2026-11-20T08:00:00.000Z', context: { auth_id: 'idp|dana', request_id: `req_${id}` } },
    login: { login_type: 'LOGIN_TYPE_WEB', success: true },
  })
  const body = `${[record('p-1'), record('p-2')].map((r) => JSON.stringify(r)).join('\n')}\n`
  const res = await s.send('POST', '/http/editor-audit', body, {
    'Content-Type': 'application/x-ndjson',
    Authorization: `Bearer ${token}`,
  })
  t.equal(res.status, 200, res.text)
  const logs = entryModes(s.dataDir).filter((e) => e.path.startsWith('logs/') && !e.dir)
  t.ok(logs.length > 0, 'records were written')
  t.same(notPrivate(s.dataDir), [])
})

t.test('wider modes found at start are narrowed, with one log line', async (t) => {
  const s = await startInProcess()
  t.equal((await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('Private.Wide'))).status, 200)
  await s.close()
  const hook = path.join(s.dataDir, 'repo.git/hooks/post-receive')
  fs.mkdirSync(path.dirname(hook), { recursive: true })
  fs.writeFileSync(hook, '#!/bin/sh\n')
  const entries = entryModes(s.dataDir)
  for (const e of entries)
    fs.chmodSync(
      path.join(s.dataDir, e.path),
      e.dir ? 0o755 : e.mode & 0o100 || e.path === path.relative(s.dataDir, hook) ? 0o755 : 0o644,
    )
  fs.chmodSync(path.join(s.dataDir, 'tokens.json'), 0o666)
  t.ok(notPrivate(s.dataDir).length >= entries.length, 'everything is wide now')

  const lines: string[] = []
  const again = await startInProcess({ dataDir: s.dataDir, logLines: lines })
  t.teardown(() => again.close())
  t.same(notPrivate(s.dataDir), [], 'narrowed at start')
  t.equal(fs.statSync(hook).mode & 0o777, 0o700, 'a hook keeps its owner execute bit')
  t.equal(fs.statSync(path.join(s.dataDir, 'tokens.json')).mode & 0o777, 0o600)
  const narrowed = lines.map((l) => JSON.parse(l)).filter((l) => /narrowed the modes/.test(l.msg))
  t.equal(narrowed.length, 1, 'one log line')
  t.equal(narrowed[0].level, 40, 'at warn')
  t.equal(narrowed[0].fixed, entries.length, 'counts what it changed')
  t.ok(narrowed[0].examples.length > 0 && narrowed[0].examples.length <= 5, 'with a few examples')
  t.equal((await again.request('GET', '/simple-rules/Private.Wide')).status, 200, 'and serves as before')
})

t.test('a plain git push with a wide umask writes private objects', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  wideUmask() // git inherits it; core.sharedRepository=0600 overrides it in the served repository
  const work = path.join(tempDir(), 'clone')
  const git = (...args: string[]) => gitAs(PAT, work, ...args)
  execFileSync('git', ['clone', '-q', s.gitdir, work])
  fs.writeFileSync(path.join(work, 'README.extra'), 'pushed with plain git\n')
  git('add', '.')
  git('commit', '-qm', 'plain push')
  git('push', '-q', 'origin', 'HEAD:main')
  t.same(notPrivate(s.gitdir), [])
})
