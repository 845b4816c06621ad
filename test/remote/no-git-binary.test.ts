// Without the git binary on PATH an http(s) remote is still fetched, through isomorphic-git (the
// fallback: the whole pack in memory), with the same words for refused credentials.
// Real port: a remote (the git server); the CLI runs in a child process whose PATH has no git.
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { runCli } from '../helpers/cli.js'
import { createGitHttpServer, createRemoteRepo, git } from '../helpers/git-http-server.js'
import { tempDir } from '../helpers/rulekeeper.js'

const TEMPLATE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../rules-repo-template')

t.test('init --from an http remote without the git binary: isomorphic-git fetches it', async (t) => {
  t.setTimeout(120_000)
  const root = tempDir('rk-nogit-')
  const server = await createGitHttpServer({ root, username: 'bot', password: 'ghp_NO_GIT_BINARY' })
  t.teardown(() => server.stop())
  const remote = await createRemoteRepo(root, 'team', TEMPLATE)
  const noGit = { PATH: tempDir('rk-empty-path-') }

  const dataDir = path.join(tempDir(), 'data')
  const refused = await runCli(['init', '--from', server.url('team'), '--data-dir', dataDir], {
    ...noGit,
    RULEKEEPER_GIT_USERNAME: 'bot',
    RULEKEEPER_GIT_TOKEN: 'ghp_WRONG',
  })
  t.equal(refused.code, 1, 'a wrong token: refused')
  t.match(refused.stderr, /refused the credentials/)

  const r = await runCli(['init', '--from', server.url('team'), '--data-dir', dataDir], {
    ...noGit,
    RULEKEEPER_GIT_USERNAME: 'bot',
    RULEKEEPER_GIT_TOKEN: 'ghp_NO_GIT_BINARY',
  })
  t.equal(r.code, 0, r.stderr)
  const log = (gitdir: string) => git(['--git-dir', gitdir, 'log', '--format=%H %s', 'main'])
  t.equal(await log(path.join(dataDir, 'repo.git')), await log(remote.gitdir), 'the whole branch was copied')
  t.notMatch(r.stdout + r.stderr, /ghp_NO_GIT_BINARY/)
})
