// A remote rules repository on this machine (a path or file:// URL, bare or not), reached through
// the git binary: isomorphic-git has no file transport (docs/decisions.md). Fetch the branch, push
// a commit over the tip it was built on (`--force-with-lease`: compare-and-swap in receive-pack),
// and check at start that the repository exists and will take our pushes.
import { execFile } from 'node:child_process'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { RulekeeperError } from '../errors.js'
import { gitEnv } from './git-binary.js'
import { readRef } from './ref-cas.js'
import { LOST_RACE, RemoteError } from './remote-error.js'

interface GitRun {
  code: number
  stdout: string
  stderr: string
}

/** The git binary without the caller's GIT_* variables or global config, never prompting. */
function runGit(args: string[], env: NodeJS.ProcessEnv = {}): Promise<GitRun> {
  return new Promise((resolve) => {
    execFile(
      'git',
      args,
      { env: { ...gitEnv(), GIT_TERMINAL_PROMPT: '0', ...env }, encoding: 'utf8', maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0
        resolve({ code, stdout: String(stdout), stderr: String(stderr) })
      },
    )
  })
}

/** git's own explanation, one line (its `fatal:`/`error:` line when there is one). */
function gitSays(r: GitRun): string {
  const lines = r.stderr.split('\n').map((l) => l.trim())
  const line = lines.find((l) => /^(fatal|error):/.test(l)) ?? lines.find((l) => l !== '') ?? `exit ${r.code}`
  return line.replace(/^(fatal|error):\s*/, '').slice(0, 300)
}

/** No automatic gc or maintenance in the service's repository: it is packed and read as it is. */
const QUIET_REPO = ['-c', 'gc.auto=0', '-c', 'maintenance.auto=false']

function configError(message: string): RulekeeperError {
  return new RulekeeperError('ConfigInvalid', message)
}

export class LocalTransport {
  readonly displayUrl: string
  private readonly trackingRef: string

  constructor(
    private readonly gitdir: string,
    /** Absolute path of the repository (its top folder, or the bare repository itself). */
    readonly repoPath: string,
    private readonly branch: string,
    /** How messages name the setting the repository came from. */
    private readonly setting: string,
  ) {
    this.displayUrl = repoPath
    this.trackingRef = `refs/remotes/origin/${branch}`
  }

  /** git run inside the remote repository, never looking above it for another one. */
  private inRemote(args: string[]): Promise<GitRun> {
    return runGit(['-C', this.repoPath, ...args], { GIT_CEILING_DIRECTORIES: path.dirname(this.repoPath) })
  }

  /**
   * Refuses, with the way out, a remote that is missing, not a repository, the service's own, lacks
   * the branch while holding others, or is a non-bare repository that refuses pushes into its
   * checked-out branch (unless only read: `writes` false). Returns notes for the log (a push that
   * will not update a working tree).
   */
  async verify(writes = true): Promise<string[]> {
    const where = `${this.setting}: the repository ${this.repoPath}`
    const st = await fsp.stat(this.repoPath).catch(() => null)
    if (!st) throw configError(`${where} does not exist`)
    if (!st.isDirectory()) throw configError(`${where} is not a directory`)
    const info = await this.inRemote([
      'rev-parse',
      '--absolute-git-dir',
      '--is-bare-repository',
      '--is-shallow-repository',
    ])
    if (info.code !== 0) throw configError(`${where} is not a Git repository: ${gitSays(info)}`)
    const [gitDir = '', bare = '', shallow = ''] = info.stdout.trim().split('\n')
    if (shallow === 'true')
      throw configError(
        `${where} is a shallow clone: its history is cut off, and rule metadata (created, last modified, by whom) comes from the whole history. Run git -C ${this.repoPath} fetch --unshallow first`,
      )
    const [ours, theirs] = await Promise.all([fsp.realpath(this.gitdir).catch(() => ''), fsp.realpath(gitDir)])
    if (ours !== '' && ours === theirs)
      throw configError(
        `${where} is the server's own repository; leave git.remote.url null to serve it (embedded mode)`,
      )
    const heads = await this.inRemote(['for-each-ref', '--format=%(refname:strip=2)', 'refs/heads/'])
    const branches = heads.stdout.split('\n').filter((b) => b !== '')
    if (branches.length > 0 && !branches.includes(this.branch))
      throw configError(
        `${where} has no branch ${this.branch} (it has: ${branches.slice(0, 10).join(', ')}); ${this.setting.startsWith('--') ? 'name its branch with --branch' : 'name the branch to serve with git.branch (RULEKEEPER_GIT_BRANCH)'}`,
      )
    if (bare === 'true' || !writes) return []
    const head = (await this.inRemote(['symbolic-ref', '-q', 'HEAD'])).stdout.trim()
    if (head !== `refs/heads/${this.branch}`) return []
    const deny = (await this.inRemote(['config', '--get', 'receive.denyCurrentBranch'])).stdout.trim().toLowerCase()
    if (deny === 'updateinstead') return []
    if (deny === '' || deny === 'refuse' || deny === 'true')
      throw configError(
        `${where} is a non-bare repository with branch ${this.branch} checked out, and git refuses pushes into a checked-out branch. ` +
          `Serve a bare copy instead (git clone --bare ${this.repoPath} ${this.repoPath}.git, then point git.remote.url at it), ` +
          `check another branch out there, or let pushes update its working tree while it is clean: git -C ${this.repoPath} config receive.denyCurrentBranch updateInstead`,
      )
    return [
      `${this.repoPath} has receive.denyCurrentBranch=${deny}: pushes move branch ${this.branch} but leave its checked-out files behind (updateInstead keeps them in step)`,
    ]
  }

  /** Fetches the branch into a tracking ref; returns its tip (null when the remote has no such branch yet). */
  fetch(): Promise<string | null> {
    return this.fetchRef(`refs/heads/${this.branch}`, this.trackingRef)
  }

  /** Fetches a ref of the remote (the branch, a pull request's head) into `target`; its tip, or null. */
  async fetchRef(source: string, target: string): Promise<string | null> {
    const r = await runGit([
      '--git-dir',
      this.gitdir,
      ...QUIET_REPO,
      'fetch',
      '--quiet',
      '--no-tags',
      '--no-write-fetch-head',
      '--no-recurse-submodules',
      '--no-auto-gc',
      this.repoPath,
      `+${source}:${target}`,
    ])
    if (r.code !== 0) {
      if (/couldn't find remote ref/i.test(r.stderr)) return null
      throw new RemoteError('unreachable', `the remote ${this.repoPath} cannot be read: ${gitSays(r)}`, gitSays(r))
    }
    // git exits 0 when it refuses to update the tracking ref (a shallow remote, …): say so.
    const refused = r.stderr.split('\n').find((l) => /rejected/i.test(l))
    if (refused)
      throw new RemoteError('unreachable', `the remote ${this.repoPath} cannot be read: ${refused.trim()}`, refused)
    return readRef(this.gitdir, target)
  }

  /** Pushes `commit` as the new tip (fast-forward only; with `expected`, only over that tip). */
  async push(commit: string, expected?: string | null): Promise<void> {
    const ref = `refs/heads/${this.branch}`
    const lease = expected === undefined ? [] : [`--force-with-lease=${ref}:${expected ?? ''}`]
    const r = await runGit([
      '--git-dir',
      this.gitdir,
      ...QUIET_REPO,
      'push',
      '--porcelain',
      '--no-verify',
      ...lease,
      this.repoPath,
      `${commit}:${ref}`,
    ])
    if (r.code === 0) return
    // --porcelain: `!<TAB>from:to<TAB>[rejected] (why)` or `[remote rejected] (why)` for a refused ref.
    const line = r.stdout.split('\n').find((l) => l.startsWith('!\t'))
    const status = line?.split('\t')[2] ?? ''
    const why = /\((.*)\)\s*$/.exec(status)?.[1] ?? ''
    if (status.startsWith('[rejected]') || (status.startsWith('[remote rejected]') && LOST_RACE.test(why)))
      throw new RemoteError(
        'rejected',
        `the remote branch ${this.branch} moved on before our push arrived (not a fast-forward)`,
        status,
      )
    if (status.startsWith('[remote rejected]'))
      throw new RemoteError(
        'refused',
        `the remote repository ${this.repoPath} declined the update of branch ${this.branch}: ${why || 'no reason given'}${refusalHint(why)}`,
        `${status} ${gitSays(r)}`,
      )
    throw new RemoteError('unreachable', `the remote ${this.repoPath} cannot be written: ${gitSays(r)}`, gitSays(r))
  }
}

/** What to do about the refusals a person can fix in the remote repository. */
function refusalHint(why: string): string {
  if (/checked out/i.test(why))
    return ' (git refuses pushes into the checked-out branch of a non-bare repository: see docs/existing-repository.md)'
  if (/unstaged|uncommitted|not clean|would be overwritten/i.test(why))
    return ' (its working tree has uncommitted changes: commit or stash them there)'
  return ''
}
