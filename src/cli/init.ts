// `rulekeeper init [DIR]`: a new rules repository from the template. DIR becomes a bare
// repository when it ends in `.git`, otherwise a normal repository with the template checked out.
// `rulekeeper init --from SOURCE`: the server's own repository (<data dir>/repo.git) seeded from an
// existing repository's branch, history kept (service/repo-seed.ts).
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { loadServiceConfig } from '../config-sections.js'
import { lockDataDir } from '../data-dir/data-dir-lock.js'
import { restrictUmask } from '../data-dir/data-dir-privacy.js'
import { TEMPLATE_DIR } from '../main.js'
import { createRepositoryFromTemplate } from '../service/repo-template.js'
import { seedRepositoryFrom } from '../service/repo-seed.js'
import { parseArgs, UsageError } from './args.js'

const HELP = `Usage: rulekeeper init [DIR] [--branch NAME]
       rulekeeper init --from SOURCE [--branch NAME] [--data-dir DIR]

Creates a new rules repository in DIR (default: the current directory) holding the template:
folder layout, a README for rule authors, and an example rule of each kind with tests.
DIR ending in .git becomes a bare repository; otherwise the files are checked out too
(that needs the git binary). DIR must not contain a repository already.

With --from, seeds the server's own repository instead (<data dir>/repo.git, what
'rulekeeper serve' serves when no remote is configured) with an existing repository's branch
and its whole history. SOURCE is a local path (a bare or a checked-out repository; only
committed work is copied), a file:// URL, or an http(s) URL (credentials from
RULEKEEPER_GIT_USERNAME / RULEKEEPER_GIT_TOKEN). The branch is --branch, else the server's
(git.branch, RULEKEEPER_GIT_BRANCH; main by default). The data directory is --data-dir, else the
server's (RULEKEEPER_DATA_DIR, dataDir of RULEKEEPER_CONFIG, ./data); it must not hold a
repository yet, and no server may be running on it.
`

export async function initCommand(argv: string[], env: Record<string, string | undefined> = {}): Promise<number> {
  const args = parseArgs(argv, ['branch', 'from', 'data-dir'], [])
  if (args.options.help) {
    process.stdout.write(HELP)
    return 0
  }
  if (args.options.from !== undefined) return initFrom(args.options, args.positionals, env)
  if (args.options['data-dir'] !== undefined) throw new UsageError('--data-dir goes with --from')
  if (args.positionals.length > 1) throw new UsageError('at most one DIR')
  const dir = path.resolve(args.positionals[0] ?? '.')
  const branch = typeof args.options.branch === 'string' ? args.options.branch : 'main'
  const committer = { name: 'rulekeeper', email: 'rulekeeper@localhost' }
  const bare = dir.endsWith('.git')
  const gitdir = bare ? dir : path.join(dir, '.git')
  if (fs.existsSync(path.join(gitdir, 'HEAD'))) throw new Error(`${dir} already holds a Git repository`)
  await createRepositoryFromTemplate(gitdir, branch, TEMPLATE_DIR, committer)
  if (!bare) {
    fs.writeFileSync(
      path.join(gitdir, 'config'),
      fs.readFileSync(path.join(gitdir, 'config'), 'utf8').replace(/bare = true/, 'bare = false'),
    )
    execFileSync('git', ['checkout', '-f', branch], { cwd: dir, stdio: 'ignore' })
  }
  process.stdout.write(`created a rules repository in ${dir} (branch ${branch})\n`)
  return 0
}

async function initFrom(
  options: Record<string, string | true>,
  positionals: string[],
  env: Record<string, string | undefined>,
): Promise<number> {
  const source = options.from
  if (typeof source !== 'string' || source === '') throw new UsageError('--from needs a path or URL')
  if (positionals.length > 0)
    throw new UsageError("--from seeds the server's data directory and takes no DIR (use --data-dir DIR)")
  if (options['data-dir'] === true || options['data-dir'] === '') throw new UsageError('--data-dir needs a directory')
  const config = loadServiceConfig(env)
  const dataDir = path.resolve(typeof options['data-dir'] === 'string' ? options['data-dir'] : config.dataDir)
  const branch = typeof options.branch === 'string' ? options.branch : config.git.branch
  const gitdir = path.join(dataDir, 'repo.git')
  restrictUmask()
  const created = !fs.existsSync(dataDir)
  const lock = lockDataDir(dataDir)
  let seeded = false
  try {
    if (fs.existsSync(gitdir))
      throw new Error(
        `${gitdir} already exists: this data directory has its rules repository, and init --from only seeds a new one. ` +
          'To replace it, stop the server and move the data directory away (it also holds tokens and stored logs), ' +
          'or seed another one with --data-dir DIR',
      )
    const { tip, from } = await seedRepositoryFrom({
      gitdir,
      source,
      branch,
      username: env.RULEKEEPER_GIT_USERNAME,
      token: env.RULEKEEPER_GIT_TOKEN,
      timeoutMs: config.git.remote.timeoutMs,
    })
    seeded = true
    process.stdout.write(`seeded ${gitdir} from ${from}: branch ${branch} at ${tip}, with its history\n`)
    if (branch !== config.git.branch)
      process.stdout.write(
        `serve it with RULEKEEPER_GIT_BRANCH=${branch} (or git.branch: ${branch} in the config file)\n`,
      )
    if (config.git.remote.url)
      process.stdout.write(
        'note: a remote is configured (git.remote.url): the server follows that remote, not this copy\n',
      )
    return 0
  } finally {
    lock.release()
    // A failed seed leaves no data directory behind that it made (a later start would fill it).
    if (!seeded && created) fs.rmSync(dataDir, { recursive: true, force: true })
  }
}
