// The bare rules repository: create it, read revisions, commit a set of file changes on top of a
// parent and move the branch by compare-and-swap. Git's files are touched only here and in the
// object modules (read-object-*.ts, write-object-loose.ts) and ref-cas.ts; no working tree is needed.
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import git from 'isomorphic-git'
import { addSignatureHeader } from './commit-signature.js'
import type { CommitSigner } from './commit-signer.js'
import { serializeCommit, type CommitInfo, type Person } from './git-commit.js'
import { TREE_MODE } from './git-tree.js'
import { ObjectDb } from './object-db.js'
import type { ObjectBatch } from './write-object-loose.js'
import { clearStaleRefLock, compareAndSwapRef, readRef } from './ref-cas.js'
import { editTree, type FileChanges } from './tree-edit.js'
import { diffTrees, listFiles, type FileDiff, type FileEntry } from './tree-diff.js'

export type { FileDiff, FileEntry, CommitInfo }

export interface NewCommit {
  parent: string | null
  changes: FileChanges
  author: Person
  committer: Person
  message: string
}

/**
 * `core.sharedRepository = 0600`: plain `git` (a person's push into the embedded repository, a
 * `git gc`) then writes files 0600/0400 and directories 0700 whatever its umask, as this service does.
 */
async function keepPrivate(gitdir: string): Promise<void> {
  if ((await git.getConfig({ fs, gitdir, path: 'core.sharedRepository' })) !== undefined) return
  await git.setConfig({ fs, gitdir, path: 'core.sharedRepository', value: '0600' })
}

/** A revision as a request may name it: a commit id, or a branch or ref name (no `..`, no option). */
export function isRevisionName(spec: string): boolean {
  return spec.length <= 200 && !spec.includes('..') && /^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(spec)
}

export class GitRepository {
  readonly db: ObjectDb
  readonly ref: string
  /** Signs every commit built here (git.signing), or none. The commit's id is that of the signed object. */
  signer: CommitSigner | null = null

  private constructor(
    readonly gitdir: string,
    readonly branch: string,
  ) {
    this.db = new ObjectDb(gitdir)
    this.ref = `refs/heads/${branch}`
  }

  static exists(gitdir: string): boolean {
    return fs.existsSync(path.join(gitdir, 'HEAD')) && fs.existsSync(path.join(gitdir, 'objects'))
  }

  /** Opens an existing bare repository, clearing a ref lock a crash of ours left behind. */
  static async open(gitdir: string, branch: string): Promise<GitRepository> {
    if (!GitRepository.exists(gitdir)) throw new Error(`no Git repository at ${gitdir}`)
    const repo = new GitRepository(gitdir, branch)
    await clearStaleRefLock(gitdir, repo.ref)
    await keepPrivate(gitdir)
    return repo
  }

  /** Creates an empty bare repository whose HEAD names `branch`. */
  static async init(gitdir: string, branch: string): Promise<GitRepository> {
    await fsp.mkdir(gitdir, { recursive: true })
    await git.init({ fs, gitdir, bare: true, defaultBranch: branch })
    // Let plain `git push` into this repository update the checked-out-less branch.
    await git.setConfig({ fs, gitdir, path: 'receive.denyCurrentBranch', value: 'ignore' })
    await keepPrivate(gitdir)
    return new GitRepository(gitdir, branch)
  }

  /** Releases what reading started (the `git cat-file` process); the repository stays usable. */
  close(): void {
    this.db.close()
  }

  head(): Promise<string | null> {
    return readRef(this.gitdir, this.ref)
  }

  /** Whether `oid` names a commit of this repository. */
  async hasCommit(oid: string): Promise<boolean> {
    return (
      /^[0-9a-f]{40}$/.test(oid) &&
      (await this.db.readCommit(oid).then(
        () => true,
        () => false,
      ))
    )
  }

  /**
   * The commit a request names: a full commit id this repository has, or a ref (`refs/…`, or a
   * branch name, or one fetched from the remote under `refs/remotes/origin/`); null when none.
   */
  async resolveRevision(spec: string): Promise<string | null> {
    if (/^[0-9a-f]{40}$/.test(spec)) return (await this.hasCommit(spec)) ? spec : null
    if (!isRevisionName(spec)) return null
    const refs = spec.startsWith('refs/') ? [spec] : [`refs/heads/${spec}`, `refs/remotes/origin/${spec}`]
    for (const ref of refs) {
      // A name that is a folder of refs (`refs/heads`, `feature` beside `feature/x`) is no ref.
      const oid = await readRef(this.gitdir, ref).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'EISDIR' || err.code === 'ENOTDIR') return null
        throw err
      })
      if (oid && (await this.hasCommit(oid))) return oid
    }
    return null
  }

  readCommit(oid: string): Promise<CommitInfo> {
    return this.db.readCommit(oid)
  }

  async treeOf(commit: string | null): Promise<string | null> {
    return commit ? (await this.db.readCommit(commit)).tree : null
  }

  async listFiles(commit: string): Promise<FileEntry[]> {
    const tree = await this.treeOf(commit)
    return tree ? listFiles(this.db, tree) : []
  }

  async diff(oldCommit: string | null, newCommit: string): Promise<FileDiff[]> {
    return diffTrees(this.db, await this.treeOf(oldCommit), await this.treeOf(newCommit))
  }

  /** The blob oid at `filePath` in a tree, or null. */
  async blobAt(tree: string | null, filePath: string): Promise<string | null> {
    let cur = tree
    const parts = filePath.split('/')
    for (let i = 0; i < parts.length && cur; i++) {
      const e = await this.db.entryOf(cur, parts[i]!)
      if (!e) return null
      if (i === parts.length - 1) return e.mode === TREE_MODE ? null : e.oid
      cur = e.mode === TREE_MODE ? e.oid : null
    }
    return null
  }

  /**
   * Every path of the tree (file or folder) whose segments equal those of `filePath` under `key`
   * (a case fold): whether a new path would collide with an existing one on a case-insensitive disk.
   */
  async pathsLike(tree: string | null, filePath: string, key: (s: string) => string): Promise<string[]> {
    const parts = filePath.split('/').map(key)
    const out: string[] = []
    const walk = async (oid: string, i: number, prefix: string): Promise<void> => {
      for (const e of await this.db.readTree(oid)) {
        if (key(e.name) !== parts[i]) continue
        const p = prefix ? `${prefix}/${e.name}` : e.name
        if (i === parts.length - 1) out.push(p)
        else if (e.mode === TREE_MODE) await walk(e.oid, i + 1, p)
      }
    }
    if (tree) await walk(tree, 0, '')
    return out
  }

  readBlob(oid: string): Promise<Buffer> {
    return this.db.readBlob(oid)
  }

  /** A blob's size in bytes, its content not read. */
  blobSize(oid: string): Promise<number> {
    return this.db.sizeOf(oid)
  }

  /**
   * Builds the commit objects for a chain of changes (each on the previous) into one batch; the
   * caller writes the batch once (one round of fsyncs for all of them) and then moves the branch.
   */
  async buildCommit(
    batch: ObjectBatch,
    c: NewCommit,
    parentTree?: string | null,
  ): Promise<{ commit: string; tree: string }> {
    const base = parentTree !== undefined ? parentTree : await this.treeOf(c.parent)
    const tree = await editTree(this.db, batch, base, c.changes)
    const payload = serializeCommit({
      tree,
      parents: c.parent ? [c.parent] : [],
      author: c.author,
      committer: c.committer,
      message: c.message,
    })
    const object = this.signer ? addSignatureHeader(payload, await this.signer.sign(payload)) : payload
    return { commit: batch.add('commit', object), tree }
  }

  writeObjects(batch: ObjectBatch): Promise<void> {
    return this.db.writeBatch(batch)
  }

  /** Moves the branch from `expected` to `next`; throws RefConflictError if it moved meanwhile. */
  moveBranch(expected: string | null, next: string): Promise<void> {
    return compareAndSwapRef(this.gitdir, this.ref, expected, next)
  }

  /**
   * The first-parent chain from `to` back to (excluding) `from`, oldest first; null when `from` is
   * not on that chain (history rewritten), so the caller must rebuild from scratch.
   */
  async firstParentChain(from: string | null, to: string, limit = 1_000_000): Promise<CommitInfo[] | null> {
    const out: CommitInfo[] = []
    return (await this.walkFirstParents(from, to, limit, (c) => void out.push(c))) ? out.reverse() : null
  }

  /**
   * Whether `from` is on the first-parent chain of `to` within `limit` commits (no list is kept):
   * false when history was rewritten, or when `from` is further back than the limit.
   */
  isFirstParentAncestor(from: string, to: string, limit: number): Promise<boolean> {
    return this.walkFirstParents(from, to, limit, () => {})
  }

  /** Walks first parents from `to` until `from`, handing each commit to `visit`; false when `from` is not reached within `limit`. */
  private async walkFirstParents(
    from: string | null,
    to: string,
    limit: number,
    visit: (c: CommitInfo) => void,
  ): Promise<boolean> {
    let cur: string | null = to
    for (let n = 0; cur && cur !== from; n++) {
      if (n >= limit) return false
      const c: CommitInfo = await this.db.readCommit(cur)
      visit(c)
      cur = c.parents[0] ?? null
    }
    return cur === from
  }
}
