// The rules repository copied from an existing one (`rulekeeper init --from`): one branch of a
// local repository or of an http(s) remote, with its whole history, as a new bare repository. Built
// in a folder beside the target and renamed into place, so an interrupted copy leaves no repository.
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import git from 'isomorphic-git'
import { RulekeeperError } from '../errors.js'
import { GitRemote } from '../git/remote.js'
import { GitRepository } from '../git/repository.js'

export interface SeedOptions {
  /** The repository to create (it must not exist). */
  gitdir: string
  /** A local path, a file:// URL or an http(s) URL. */
  source: string
  branch: string
  /** For an http(s) source. */
  username?: string
  token?: string
  timeoutMs?: number
}

/** Copies `branch` of `source` into a new bare repository at `gitdir`; returns the tip and where it came from. */
export async function seedRepositoryFrom(o: SeedOptions): Promise<{ tip: string; from: string }> {
  if (fs.existsSync(o.gitdir)) throw new RulekeeperError('Conflict', `${o.gitdir} already exists`)
  const building = path.join(path.dirname(o.gitdir), `.${path.basename(o.gitdir)}.seeding-${process.pid}`)
  await fsp.rm(building, { recursive: true, force: true })
  try {
    const repo = await GitRepository.init(building, o.branch)
    const remote = new GitRemote(building, {
      url: o.source,
      branch: o.branch,
      username: o.username,
      token: o.token,
      timeoutMs: o.timeoutMs,
      setting: '--from',
    })
    await remote.verify(false)
    const tip = await remote.fetch()
    if (tip === null)
      throw new RulekeeperError(
        'NotFound',
        `--from: ${remote.displayUrl} has no branch ${o.branch} (or no commit on it); name its branch with --branch`,
      )
    await repo.moveBranch(null, tip)
    repo.close()
    // The copy stands alone: no trace of where it came from but the commits themselves.
    await git.deleteRef({ fs, gitdir: building, ref: `refs/remotes/origin/${o.branch}` })
    await git.deleteRemote({ fs, gitdir: building, remote: 'origin' }).catch(() => {})
    await fsp.rename(building, o.gitdir)
    return { tip, from: remote.displayUrl }
  } finally {
    await fsp.rm(building, { recursive: true, force: true })
  }
}
