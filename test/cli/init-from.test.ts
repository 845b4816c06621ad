// `rulekeeper init --from SOURCE`: the data directory's repository seeded from an existing one (a
// checked-out repository by path, a bare one by file:// URL, an http(s) remote with credentials),
// its history kept commit for commit, then served; and every refusal says why and changes nothing.
// Real port: a remote (an http(s) git server).
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import t from 'tap'
import { runCli } from '../helpers/cli.js'
import { createGitHttpServer, createRemoteRepo, git } from '../helpers/git-http-server.js'
import { startInProcess } from '../helpers/in-process.js'
import { tempDir } from '../helpers/rulekeeper.js'

const TEMPLATE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../rules-repo-template')
/** Everything that identifies a commit and who made it, oldest first. */
const LOG_FORMAT = '--format=%H %P %T|%an <%ae> %ad|%cn <%ce> %cd|%s'

const RULE = (id: string) =>
  [
    'AnalysisType: rule',
    `RuleID: ${id}`,
    'Enabled: true',
    'LogTypes:',
    '  - AWS.CloudTrail',
    'Severity: Low',
    'Detection:',
    '  - KeyPath: eventName',
    '    Condition: Equals',
    '    Value: ConsoleLogin',
    '',
  ].join('\n')

/** A team's checked-out repository: the template, then two rules by two people, on `branch`. */
async function teamRepo(branch = 'main'): Promise<string> {
  const dir = path.join(tempDir('rk-team-'), 'panther-analysis')
  fs.cpSync(TEMPLATE, dir, { recursive: true })
  await git(['init', '-q', '-b', branch], { cwd: dir })
  const commit = async (who: string, date: string, msg: string) => {
    await git(['add', '-A'], { cwd: dir })
    await git(['commit', '-q', '-m', msg], {
      cwd: dir,
      env: {
        GIT_AUTHOR_NAME: who,
        GIT_AUTHOR_EMAIL: `${who.toLowerCase()}@example.com`,
        GIT_AUTHOR_DATE: date,
        GIT_COMMITTER_NAME: 'Merge Bot',
        GIT_COMMITTER_EMAIL: 'bot@example.com',
        GIT_COMMITTER_DATE: date,
      },
    })
  }
  await commit('Ana', '2025-03-01T10:00:00Z', 'Start from the template')
  fs.mkdirSync(path.join(dir, 'rules/aws'), { recursive: true })
  fs.writeFileSync(path.join(dir, 'rules/aws/Team.Root.Login.yml'), RULE('Team.Root.Login'))
  await commit('Ben', '2025-04-02T11:00:00Z', 'Add Team.Root.Login')
  fs.writeFileSync(path.join(dir, 'rules/aws/Team.Other.yml'), RULE('Team.Other'))
  await commit('Ana', '2025-05-03T12:00:00Z', 'Add Team.Other')
  return dir
}

const log = (gitdirOrWork: string, branch = 'main') =>
  git(['--git-dir', gitdirOrWork, 'log', '--reverse', LOG_FORMAT, `refs/heads/${branch}`])

t.test('from a checked-out repository by path: the history is kept and the server serves it', async (t) => {
  const src = await teamRepo()
  fs.writeFileSync(path.join(src, 'rules/aws/Uncommitted.yml'), RULE('Uncommitted.Draft'))
  const dataDir = path.join(tempDir(), 'data')
  const r = await runCli(['init', '--from', src, '--data-dir', dataDir])
  t.equal(r.code, 0, r.stderr)
  const gitdir = path.join(dataDir, 'repo.git')
  t.match(r.stdout, `seeded ${gitdir} from ${src}: branch main at `)
  t.equal(await log(gitdir), await log(path.join(src, '.git')), 'git log is the same, commit for commit')
  t.equal((await git(['--git-dir', gitdir, 'rev-parse', '--is-bare-repository'])).trim(), 'true')
  t.equal((await git(['--git-dir', gitdir, 'for-each-ref', '--format=%(refname)'])).trim(), 'refs/heads/main')
  t.notMatch(fs.readFileSync(path.join(gitdir, 'config'), 'utf8'), /remote|panther-analysis/, 'no trace of the source')
  t.equal((await git(['--git-dir', gitdir, 'fsck', '--strict'])).trim(), '', 'git fsck is clean')
  t.equal(fs.statSync(dataDir).mode & 0o777, 0o700, 'the data directory is private')

  const s = await startInProcess({ dataDir })
  t.teardown(() => s.close())
  const rule = await s.request('GET', '/simple-rules/Team.Root.Login')
  t.equal(rule.status, 200, rule.text)
  t.equal(rule.body.createdBy.id, 'ben@example.com', 'metadata comes from the kept history')
  t.equal(rule.body.createdAt, '2025-04-02T11:00:00.000Z')
  t.equal((await s.request('GET', '/simple-rules/Uncommitted.Draft')).status, 404, 'uncommitted work is not copied')
})

t.test('from a bare repository by file:// URL, and a branch other than main', async (t) => {
  const work = await teamRepo('trunk')
  const bare = path.join(tempDir('rk-team-bare-'), 'rules.git')
  await git(['clone', '-q', '--bare', work, bare])
  const dataDir = path.join(tempDir(), 'data')
  const url = pathToFileURL(bare).href

  const noMain = await runCli(['init', '--from', url, '--data-dir', dataDir])
  t.equal(noMain.code, 1)
  t.match(
    noMain.stderr,
    /--from: the repository .*rules\.git has no branch main \(it has: trunk\); name its branch with --branch/,
  )
  t.notOk(fs.existsSync(dataDir), 'a refused seed leaves no data directory')

  const r = await runCli(['init', '--from', url, '--branch', 'trunk', '--data-dir', dataDir])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /RULEKEEPER_GIT_BRANCH=trunk/, 'says how to serve that branch')
  t.equal(await log(path.join(dataDir, 'repo.git'), 'trunk'), await log(bare, 'trunk'))
  t.equal((await git(['--git-dir', path.join(dataDir, 'repo.git'), 'symbolic-ref', 'HEAD'])).trim(), 'refs/heads/trunk')
})

t.test('from an http(s) remote, with the credentials from the environment', async (t) => {
  const root = tempDir('rk-init-http-')
  const server = await createGitHttpServer({ root, username: 'bot', password: 'ghp_INIT_FROM_SECRET' })
  t.teardown(() => server.stop())
  const remote = await createRemoteRepo(root, 'team', TEMPLATE)
  const work = path.join(tempDir(), 'w')
  await git(['clone', '-q', remote.gitdir, work])
  fs.mkdirSync(path.join(work, 'rules/aws'), { recursive: true })
  fs.writeFileSync(path.join(work, 'rules/aws/Http.Rule.yml'), RULE('Http.Rule'))
  await git(['-C', work, 'add', '-A'])
  await git(['-C', work, '-c', 'user.name=Cy', '-c', 'user.email=cy@example.com', 'commit', '-qm', 'Add Http.Rule'])
  await git(['-C', work, 'push', '-q', 'origin', 'HEAD:main'])

  const dataDir = path.join(tempDir(), 'data')
  const refused = await runCli(['init', '--from', server.url('team'), '--data-dir', dataDir])
  t.equal(refused.code, 1, 'no credentials: refused')
  t.match(refused.stderr, /refused the credentials/)
  t.notOk(fs.existsSync(dataDir))

  const r = await runCli(['init', '--from', server.url('team'), '--data-dir', dataDir], {
    RULEKEEPER_GIT_USERNAME: 'bot',
    RULEKEEPER_GIT_TOKEN: 'ghp_INIT_FROM_SECRET',
  })
  t.equal(r.code, 0, r.stderr)
  const gitdir = path.join(dataDir, 'repo.git')
  t.equal(await log(gitdir), await log(remote.gitdir))
  const stored = fs.readFileSync(path.join(gitdir, 'config'), 'utf8')
  t.notMatch(stored, /ghp_INIT_FROM_SECRET|127\.0\.0\.1/, 'neither the token nor the URL is kept')
  t.notMatch(r.stdout + r.stderr, /ghp_INIT_FROM_SECRET/)
})

t.test(
  'refusals: an existing repository, a missing or shallow source, a running server, a DIR with --from',
  async (t) => {
    const src = await teamRepo()
    const dataDir = path.join(tempDir(), 'data')
    t.equal((await runCli(['init', '--from', src, '--data-dir', dataDir])).code, 0)
    const gitdir = path.join(dataDir, 'repo.git')
    const before = await log(gitdir)

    const again = await runCli(['init', '--from', src, '--data-dir', dataDir])
    t.equal(again.code, 1)
    t.match(again.stderr, `${gitdir} already exists`)
    t.match(again.stderr, /move the data directory away/)
    t.equal(await log(gitdir), before, 'the existing repository is untouched')

    const missingData = path.join(tempDir(), 'data')
    const missing = await runCli(['init', '--from', path.join(src, 'nope'), '--data-dir', missingData])
    t.equal(missing.code, 1)
    t.match(missing.stderr, /--from: the repository .*nope does not exist/)
    t.notOk(fs.existsSync(missingData), 'nothing created')

    const notRepo = tempDir('rk-plain-')
    const plain = await runCli(['init', '--from', notRepo, '--data-dir', missingData])
    t.equal(plain.code, 1)
    t.match(plain.stderr, /is not a Git repository/)

    const shallow = path.join(tempDir('rk-shallow-'), 'shallow')
    await git(['clone', '-q', '--depth', '1', pathToFileURL(src).href, shallow])
    const cut = await runCli(['init', '--from', shallow, '--data-dir', missingData])
    t.equal(cut.code, 1)
    t.match(cut.stderr, /is a shallow clone: its history is cut off.*fetch --unshallow/)
    t.notOk(fs.existsSync(missingData), 'nothing created')

    const usage = await runCli(['init', 'somewhere', '--from', src])
    t.equal(usage.code, 2)
    t.match(usage.stderr, /takes no DIR/)

    // A server on a data directory: the seed is refused before anything is looked at.
    const running = await startInProcess({})
    t.teardown(() => running.close())
    fs.rmSync(running.gitdir, { recursive: true, force: true }) // even with its repository gone
    const locked = await runCli(['init', '--from', src, '--data-dir', running.dataDir])
    t.equal(locked.code, 1)
    t.match(locked.stderr, /in use by another rulekeeper server/)
    t.notOk(fs.existsSync(running.gitdir), 'nothing was written under the running server')
  },
)
