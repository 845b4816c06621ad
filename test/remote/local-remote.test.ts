// A remote on this machine: a path or a file:// URL, bare or not (the git binary fetches and pushes).
// The service starts on it, an API write arrives there as one commit, a commit pushed into it is
// served after a webhook or a reconcile, and what cannot work is refused at start with the way out.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import t from 'tap'
import { createRemoteRepo, git, PersonClone, type RemoteRepo } from '../helpers/git-http-server.js'
import { type InProcessServer, startInProcess } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir, type TestServerOptions } from '../helpers/rulekeeper.js'
import { hubSignature, simplePath, simpleRuleYaml, waitFor, WEBHOOK_SECRET } from './remote-fixture.js'

const TEMPLATE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../rules-repo-template')
const erin = { name: 'Erin Local', email: 'erin@example.com' }

/** The error a start fails with (a start that succeeds is closed and gives null). */
async function startError(o: TestServerOptions): Promise<Error | null> {
  try {
    await (await startInProcess(o)).close()
    return null
  } catch (err) {
    return err as Error
  }
}

async function start(t: Tap, url: string, o: TestServerOptions = {}): Promise<InProcessServer> {
  const s = await startInProcess({ ...o, env: { RULEKEEPER_GIT_URL: url, ...(o.env ?? {}) } })
  t.teardown(() => s.close())
  return s
}

interface Tap {
  teardown(fn: () => unknown): void
}

/** A bare repository seeded from the template, and a non-bare clone of it with `main` checked out. */
async function repos(): Promise<{ bare: RemoteRepo; work: string }> {
  const root = tempDir('rk-local-remote-')
  const bare = await createRemoteRepo(root, 'rules', TEMPLATE)
  const work = path.join(root, 'checkout')
  await git(['clone', '-q', bare.gitdir, work])
  return { bare, work }
}

/** What the service's index says a rule is, or its status code. */
async function ruleStatus(s: InProcessServer, kindPath: string, id: string): Promise<number> {
  return (await s.request('GET', `/${kindPath}/${id}`)).status
}

t.test('a bare repository named by its path: served, written to, followed', async (t) => {
  const { bare } = await repos()
  const s = await start(t, bare.gitdir, { env: { RULEKEEPER_GIT_WEBHOOK_SECRET: WEBHOOK_SECRET } })
  const st = await s.request('GET', '/status')
  t.same(st.body.remote, { url: bare.gitdir, branch: 'main', reachable: true }, 'status names the path')
  t.equal(s.git('rev-parse', 'refs/heads/main').trim(), await bare.head(), 'the local copy is at the remote tip')

  const before = await bare.head()
  const created = await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('Local.Api.Write'), {
    'X-Change-Reason': 'written through the API',
  })
  t.equal(created.status, 200, created.text)
  const tip = await bare.head()
  t.not(tip, before, 'the remote has the write before the 200')
  t.equal((await bare.git('rev-parse', `${tip}^`)).trim(), before, 'one commit on the previous tip')
  t.match(
    await bare.git('log', '-1', '--format=%s%n%b', tip),
    /^Create simple rule Local\.Api\.Write\n[\s\S]*^Rule-Id: Local\.Api\.Write$/m,
  )

  // A person pushes into the same repository; the webhook makes the service follow.
  const c = await PersonClone.clone(bare.gitdir, erin)
  c.write(simplePath('Local.Pushed'), simpleRuleYaml('Local.Pushed'))
  const pushed = await c.commitAll('Add Local.Pushed')
  t.ok((await c.push()).ok)
  t.equal(await ruleStatus(s, 'simple-rules', 'Local.Pushed'), 404, 'not served before the webhook')
  const body = JSON.stringify({ ref: 'refs/heads/main', after: pushed })
  const hook = await s.send('POST', '/hooks/git', body, {
    'Content-Type': 'application/json',
    'X-Hub-Signature-256': hubSignature(WEBHOOK_SECRET, body),
  })
  t.equal(hook.status, 202, hook.text)
  await waitFor(
    'the pushed rule to be served',
    async () => (await ruleStatus(s, 'simple-rules', 'Local.Pushed')) === 200,
  )
  t.equal((await s.request('GET', '/status')).body.lastAppliedRevision, pushed)

  // A write after another push (no webhook this time) is rebuilt on it: compare-and-swap, no merge.
  c.write(simplePath('Local.Pushed.Two'), simpleRuleYaml('Local.Pushed.Two'))
  const second = await c.commitAll('Add Local.Pushed.Two')
  t.ok((await c.push()).ok)
  const updated = await s.request(
    'PUT',
    '/simple-rules/Local.Api.Write',
    SAMPLE_BODIES.simple('Local.Api.Write', { severity: 'LOW' }),
  )
  t.equal(updated.status, 200, updated.text)
  const tip2 = await bare.head()
  t.equal((await bare.git('rev-parse', `${tip2}^`)).trim(), second, 'rebuilt on the pushed commit')
  t.equal((await bare.git('rev-list', '--merges', '--count', tip2)).trim(), '0', 'no merge commits')
})

t.test('a file:// URL of a bare repository; a push it declines is a 503 that leaves nothing', async (t) => {
  const { bare } = await repos()
  const url = pathToFileURL(bare.gitdir).href
  const s = await start(t, url)
  t.equal((await s.request('GET', '/status')).body.remote.url, bare.gitdir)
  const ok = await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('File.Url.Write'))
  t.equal(ok.status, 200, ok.text)
  t.match(await bare.git('log', '-1', '--format=%s'), /^Create simple rule File\.Url\.Write/)

  const hook = path.join(bare.gitdir, 'hooks', 'pre-receive')
  fs.writeFileSync(hook, '#!/bin/sh\necho "rules are frozen" >&2\nexit 1\n', { mode: 0o755 })
  const before = await bare.head()
  const localBefore = s.git('rev-parse', 'refs/heads/main').trim()
  const refused = await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('File.Url.Refused'))
  t.equal(refused.status, 503, refused.text)
  t.match(refused.body.message, /declined the update of branch main: pre-receive hook declined/)
  t.equal(await bare.head(), before, 'the remote did not move')
  t.equal(s.git('rev-parse', 'refs/heads/main').trim(), localBefore, 'no commit left behind locally')
  t.equal(await ruleStatus(s, 'simple-rules', 'File.Url.Refused'), 404)
})

t.test('a relative path is resolved against the working directory', async (t) => {
  const { bare } = await repos()
  const cwd = process.cwd()
  process.chdir(path.dirname(bare.gitdir))
  t.teardown(() => process.chdir(cwd))
  const s = await start(t, './rules.git')
  t.equal((await s.request('GET', '/status')).body.remote.url, bare.gitdir)
})

t.test('a non-bare repository with the branch checked out is refused at start, saying what to do', async (t) => {
  const { work } = await repos()
  const dataDir = tempDir()
  const err = await startError({ dataDir, env: { RULEKEEPER_GIT_URL: work } })
  t.ok(err, 'the start fails')
  t.match(err?.message, /non-bare repository with branch main checked out/)
  t.match(err?.message, /git clone --bare/)
  t.match(err?.message, /receive\.denyCurrentBranch updateInstead/)
  t.notOk(fs.existsSync(path.join(dataDir, 'repo.git')), 'nothing was created')
  t.notOk(fs.existsSync(path.join(dataDir, 'server.lock')), 'the data directory is released')
})

t.test(
  'a non-bare repository with updateInstead: writes land in its working tree; its commits are served',
  async (t) => {
    const { work } = await repos()
    await git(['-C', work, 'config', 'receive.denyCurrentBranch', 'updateInstead'])
    const s = await start(t, work)
    const created = await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('Work.Tree.Write'))
    t.equal(created.status, 200, created.text)
    t.match(await git(['-C', work, 'log', '-1', '--format=%s']), /^Create simple rule Work\.Tree\.Write/)
    t.ok(fs.existsSync(path.join(work, simplePath('Work.Tree.Write'))), 'the file is checked out there')
    t.equal((await git(['-C', work, 'status', '--porcelain'])).trim(), '', 'the working tree is clean')

    // The person commits in that checkout; a reconcile serves it.
    fs.mkdirSync(path.dirname(path.join(work, simplePath('Work.Tree.Person'))), { recursive: true })
    fs.writeFileSync(path.join(work, simplePath('Work.Tree.Person')), simpleRuleYaml('Work.Tree.Person'))
    await git(['-C', work, 'add', '-A'])
    await git(['-C', work, '-c', 'user.name=Erin', '-c', 'user.email=erin@example.com', 'commit', '-qm', 'Add a rule'])
    const rec = await s.request('POST', '/reconcile')
    t.equal(rec.status, 200, rec.text)
    t.equal(await ruleStatus(s, 'simple-rules', 'Work.Tree.Person'), 200)

    // Uncommitted changes there: git declines the push, and the caller is told why.
    fs.appendFileSync(path.join(work, simplePath('Work.Tree.Person')), '# editing\n')
    const refused = await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('Work.Tree.Dirty'))
    t.equal(refused.status, 503, refused.text)
    t.match(refused.body.message, /uncommitted changes: commit or stash them there/)
  },
)

t.test('a non-bare repository with another branch checked out takes pushes to the served branch', async (t) => {
  const { work } = await repos()
  await git(['-C', work, 'checkout', '-q', '-b', 'drafts'])
  const s = await start(t, work)
  const created = await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('Other.Branch.Write'))
  t.equal(created.status, 200, created.text)
  t.match(await git(['-C', work, 'log', '-1', '--format=%s', 'main']), /^Create simple rule Other\.Branch\.Write/)
  t.equal((await git(['-C', work, 'symbolic-ref', 'HEAD'])).trim(), 'refs/heads/drafts', 'the checkout is untouched')
})

t.test('an empty local repository is seeded with the template', async (t) => {
  const root = tempDir('rk-local-empty-')
  const empty = await createRemoteRepo(root, 'empty')
  const s = await start(t, empty.gitdir)
  t.match(await empty.git('log', '-1', '--format=%s'), /^Initialize rules repository from template/)
  t.equal(s.git('rev-parse', 'refs/heads/main').trim(), await empty.head())
})

t.test('credentials do not apply to a local remote: ignored, and said so', async (t) => {
  const { bare } = await repos()
  const logLines: string[] = []
  const s = await start(t, bare.gitdir, {
    env: { RULEKEEPER_GIT_USERNAME: 'someone', RULEKEEPER_GIT_TOKEN: 'ghp_SHOULD_NOT_MATTER' },
    logLines,
  })
  t.equal((await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('Creds.Ignored'))).status, 200)
  t.ok(
    logLines.some((l) => /RULEKEEPER_GIT_TOKEN are ignored: the remote is a local repository/.test(l)),
    'a warning says they are ignored',
  )
  t.notMatch(logLines.join('\n'), /ghp_SHOULD_NOT_MATTER/, 'the token is never logged')
  t.notMatch(fs.readFileSync(path.join(s.gitdir, 'config'), 'utf8'), /someone|ghp_/, 'nor stored')
})

t.test('a local remote that cannot work is a clear start error', async (t) => {
  const root = tempDir('rk-local-bad-')
  const notRepo = path.join(root, 'plain')
  fs.mkdirSync(notRepo)
  const withOther = await createRemoteRepo(root, 'other', TEMPLATE)
  await withOther.git('branch', '-m', 'main', 'master')
  const shallow = path.join(root, 'shallow')
  await git(['clone', '-q', '--depth', '1', '--no-local', pathToFileURL(withOther.gitdir).href, shallow])
  const cases: Array<[string, string, RegExp]> = [
    [
      'missing',
      path.join(root, 'missing.git'),
      /git\.remote\.url \(RULEKEEPER_GIT_URL\): the repository .*missing\.git does not exist/,
    ],
    ['not a repository', notRepo, /the repository .*plain is not a Git repository/],
    ['no such branch', withOther.gitdir, /has no branch main \(it has: master\)/],
    ['shallow clone', shallow, /the repository .*shallow is a shallow clone/],
    ['ssh address', 'git@example.com:team/rules.git', /looks like an ssh address/],
    ['ssh URL', 'ssh://git@example.com/team/rules.git', /ssh:\/\/ remotes are not supported/],
    ['file URL of another host', 'file://fileserver/srv/rules.git', /not on host fileserver/],
  ]
  for (const [name, url, message] of cases) {
    const dataDir = tempDir()
    const err = await startError({ dataDir, env: { RULEKEEPER_GIT_URL: url } })
    t.match(err?.message, message, name)
    t.notOk(fs.existsSync(path.join(dataDir, 'repo.git')), `${name}: nothing was created`)
  }
  // The service's own repository as its remote: refused too.
  const s = await startInProcess({})
  const own = s.gitdir
  await s.close()
  const err = await startError({ dataDir: path.dirname(own), env: { RULEKEEPER_GIT_URL: own } })
  t.match(err?.message, /is the server's own repository/)
})
