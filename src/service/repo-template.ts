// The rules repository's first commit: the template folder (rules-repo-template/) written as one
// root commit by the `system` actor. Used when the service starts on an empty data directory or an
// empty remote (service/index.ts), which records the commit as its own (service-commits.ts), and
// by `rulekeeper init`.
import fsp from 'node:fs/promises'
import path from 'node:path'
import type { CommitSigner } from '../git/commit-signer.js'
import type { Person } from '../git/git-commit.js'
import { GitRepository } from '../git/repository.js'
import type { FileChanges } from '../git/tree-edit.js'
import { ObjectBatch } from '../git/write-object-loose.js'
import type { ServiceCommits } from './service-commits.js'

/** Every file under `dir` (skipping hidden folders and __pycache__), as repository paths. */
async function readTemplate(dir: string): Promise<FileChanges> {
  const out: FileChanges = new Map()
  const walk = async (abs: string, rel: string) => {
    for (const e of await fsp.readdir(abs, { withFileTypes: true })) {
      if (e.name.startsWith('.') || e.name === '__pycache__') continue
      const r = rel ? `${rel}/${e.name}` : e.name
      if (e.isDirectory()) await walk(path.join(abs, e.name), r)
      else if (e.isFile()) out.set(r, await fsp.readFile(path.join(abs, e.name)))
    }
  }
  await walk(dir, '')
  return out
}

/**
 * Writes the template as a root commit by the `system` actor (the branch is not moved), recorded in
 * `serviceCommits` when given (a server's own repository).
 */
export async function commitTemplate(
  repo: GitRepository,
  templateDir: string,
  committer: { name: string; email: string },
  serviceCommits?: ServiceCommits,
): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  const who: Person = { ...committer, timestamp: now, tzOffsetMinutes: 0 }
  const batch = new ObjectBatch()
  const message = 'Initialize rules repository from template\n\nActor-Id: system\nActor-Type: system\n'
  const { commit } = await repo.buildCommit(batch, {
    parent: null,
    changes: await readTemplate(templateDir),
    author: who,
    committer: who,
    message,
  })
  await repo.writeObjects(batch)
  await serviceCommits?.record([commit])
  await serviceCommits?.sync()
  return commit
}

/** Creates a bare repository holding the template as one initial commit by the `system` actor. */
export async function createRepositoryFromTemplate(
  gitdir: string,
  branch: string,
  templateDir: string,
  committer: { name: string; email: string },
  serviceCommits?: ServiceCommits,
  signer: CommitSigner | null = null,
): Promise<GitRepository> {
  const repo = await GitRepository.init(gitdir, branch)
  repo.signer = signer
  await repo.moveBranch(null, await commitTemplate(repo, templateDir, committer, serviceCommits))
  return repo
}
