// The rules service's state: the repository, the current immutable index, the history metadata
// and the writer. Opening it creates the repository from the template on first start, loads the
// index and catches the history up; syncToTip() follows commits pushed into it with plain git.
import fsp from 'node:fs/promises'
import path from 'node:path'
import type { EngineRegistry } from '../engine/engine.js'
import type { Logger } from '../log.js'
import type { Registry } from '../metrics.js'
import { RuleIndex } from '../rules/rule-index.js'
import type { Person } from '../git/git-commit.js'
import { ObjectBatch } from '../git/write-object-loose.js'
import { GitRepository } from '../git/repository.js'
import type { FileChanges } from '../git/tree-edit.js'
import { unavailable } from '../errors.js'
import type { GitRemote } from '../git/remote.js'
import type { HistoryTracker } from './history.js'
import { RuleCatalog } from './catalog.js'
import { catchUpHistory, loadFullRevision, reindexPaths, type IdentityMemo } from './revision-sync.js'
import { RuleWriter, writerMetrics, type WriterMetrics } from './rule-writer.js'

export interface RuleStoreOptions {
  gitdir: string
  branch: string
  committer: { name: string; email: string }
  engines: EngineRegistry
  templateDir: string
  cacheDir: string | null
  logger: Logger
  metrics: Registry
  /** With a remote, the remote is the truth and the local repository follows it. */
  remote?: GitRemote
  /** The mass-deletion guard: a revision removing more than `share` of the rules, and at least `min`. */
  massDelete?: { share: number; min: number }
}

/** A revision the store refused to apply, waiting for a person. */
export interface StalledRevision {
  revision: string
  reason: string
  removed: number
  total: number
}

export type StoreMetrics = WriterMetrics

/** Every file under `dir` (skipping hidden folders and __pycache__), as repository paths. */
export async function readTemplate(dir: string): Promise<FileChanges> {
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

/** Writes the template as a root commit by the `system` actor (the branch is not moved). */
async function commitTemplate(repo: GitRepository, templateDir: string, committer: { name: string; email: string }): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  const who: Person = { ...committer, timestamp: now, tzOffsetMinutes: 0 }
  const batch = new ObjectBatch()
  const message = 'Initialize rules repository from template\n\nActor-Id: system\nActor-Type: system\n'
  const { commit } = await repo.buildCommit(batch, { parent: null, changes: await readTemplate(templateDir), author: who, committer: who, message })
  await repo.writeObjects(batch)
  return commit
}

/** Creates a bare repository holding the template as one initial commit by the `system` actor. */
export async function createRepositoryFromTemplate(gitdir: string, branch: string, templateDir: string, committer: { name: string; email: string }): Promise<GitRepository> {
  const repo = await GitRepository.init(gitdir, branch)
  await repo.moveBranch(null, await commitTemplate(repo, templateDir, committer))
  return repo
}

export class RuleStore {
  /** The published index, its history metadata and the one lane for changing them. */
  readonly catalog: RuleCatalog
  readonly writer: RuleWriter
  readonly metrics: StoreMetrics
  private syncing: Promise<void> | null = null
  /** Set while a mass deletion waits for confirmation. */
  stalled: StalledRevision | null = null
  private allowedMassDelete: string | null = null
  private massDelete: { share: number; min: number }

  private constructor(
    readonly repo: GitRepository,
    readonly engines: EngineRegistry,
    readonly committer: { name: string; email: string },
    readonly logger: Logger,
    cacheDir: string | null,
    registry: Registry,
    readonly remote: GitRemote | undefined,
  ) {
    this.massDelete = { share: 0.5, min: 10 }
    this.catalog = new RuleCatalog({ cacheDir, engineKinds: Object.keys(engines), logger })
    this.metrics = writerMetrics(registry)
    this.writer = new RuleWriter({ catalog: this.catalog, follower: this, repo, remote, engines, committer, logger, metrics: this.metrics })
  }

  static async open(o: RuleStoreOptions): Promise<RuleStore> {
    let repo: GitRepository
    if (GitRepository.exists(o.gitdir)) repo = await GitRepository.open(o.gitdir, o.branch)
    else if (o.remote) {
      o.logger.info({ gitdir: o.gitdir, remote: o.remote.displayUrl }, 'creating the local copy of the remote rules repository')
      repo = await GitRepository.init(o.gitdir, o.branch)
    } else {
      o.logger.info({ gitdir: o.gitdir }, 'creating the rules repository from the template')
      repo = await createRepositoryFromTemplate(o.gitdir, o.branch, o.templateDir, o.committer)
    }
    const store = new RuleStore(repo, o.engines, o.committer, o.logger, o.cacheDir, o.metrics, o.remote)
    if (o.massDelete) store.massDelete = o.massDelete
    await store.catalog.load(repo)
    if (o.remote) {
      let tip: string | null
      try {
        tip = await o.remote.fetch()
      } catch (err) {
        // A local copy can be served while the remote is away; without one there is nothing to serve.
        if ((await repo.head()) === null) throw err
        o.logger.warn({ msg: (err as Error).message }, 'the remote is unreachable at start; serving the local copy')
        tip = await repo.head()
      }
      if (tip === null && (await repo.head()) === null) {
        // An empty remote: seed it with the template, as the embedded default would be.
        const seed = await commitTemplate(repo, o.templateDir, o.committer)
        await o.remote.push(seed)
        await repo.moveBranch(null, seed)
      } else if (tip !== null) await store.followRemoteTip(tip)
    }
    await store.syncToTip({ allowMassDelete: true })
    return store
  }

  /** The published index (the catalog's). */
  get index(): RuleIndex {
    return this.catalog.index
  }

  get history(): HistoryTracker {
    return this.catalog.history
  }

  /** Runs `fn` with no write batch or remote pull in progress (the catalog's lane). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.catalog.exclusive(fn)
  }

  /** Moves the local branch to the fetched remote tip (the remote is the truth). */
  async followRemoteTip(tip: string): Promise<void> {
    const head = await this.repo.head()
    if (head !== tip) await this.repo.moveBranch(head, tip)
  }

  /** Fetches the remote and follows it; the reconciler's step in remote mode. */
  async pullRemote(): Promise<{ tip: string | null }> {
    if (!this.remote) return { tip: await this.repo.head() }
    const remote = this.remote
    return this.exclusive(async () => {
      const tip = await remote.fetch()
      if (tip) await this.followRemoteTip(tip)
      return { tip }
    })
  }

  /** A person confirmed the mass deletion of the current head: apply it on the next sync. */
  allowMassDelete(revision: string | null): void {
    this.allowedMassDelete = revision
  }

  /**
   * Follows the local branch if it moved (plain git pushes, a pulled remote); single flight. A
   * revision that would delete too many rules is not applied: `stalled` says why until a person
   * confirms or the revision changes.
   */
  syncToTip(opts: { allowMassDelete?: boolean } = {}): Promise<void> {
    if (!this.syncing) {
      this.syncing = this.doSync(opts.allowMassDelete === true).finally(() => {
        this.syncing = null
      })
    }
    return this.syncing
  }

  /** For writers: the index is at the branch tip, or the reason it cannot be (a 503). */
  async syncForWrite(): Promise<void> {
    await this.syncToTip()
    if (this.stalled) throw unavailable(`writes are paused: ${this.stalled.reason}; confirm with POST /reconcile?allow-mass-delete=true`)
  }

  private async doSync(allowAll: boolean): Promise<void> {
    const head = await this.repo.head()
    if (head === this.index.revision) {
      this.stalled = null
      // A persisted index can be newer than the history cache (they are saved separately).
      if (head && this.history.head !== head) await catchUpHistory(this.repo, this.history, head, this.logger)
      return
    }
    if (!head) {
      this.catalog.publish(RuleIndex.empty())
      this.history.reset()
      return
    }
    const chain = this.index.revision ? await this.repo.firstParentChain(this.index.revision, head, 100_000) : null
    const total = this.index.rules.size
    let removed = 0
    let next: () => RuleIndex
    const memo: IdentityMemo = new Map()
    let fullBuild = false
    if (this.index.revision && chain) {
      const changed = (await this.repo.diff(this.index.revision, head)).map((d) => d.path)
      const draft = this.index.draft()
      await reindexPaths(this.repo, head, draft, changed, this.engines)
      removed = draft.removedRuleCount()
      next = () => draft.publish(head)
    } else {
      const full = await loadFullRevision(this.repo, head, RuleIndex.empty(), this.engines, this.logger, memo)
      fullBuild = true
      for (const id of this.index.rules.keys()) if (!full.rules.has(id)) removed++
      next = () => full
    }
    if (!allowAll && this.allowedMassDelete !== head && removed >= this.massDelete.min && removed > total * this.massDelete.share) {
      // Nothing was published: the draft is dropped and the current index keeps serving.
      const reason = `revision ${head.slice(0, 12)} would delete ${removed} of ${total} rules (more than ${Math.round(this.massDelete.share * 100)}%)`
      if (this.stalled?.revision !== head) this.logger.warn({ revision: head, removed, total }, 'mass deletion held back')
      this.stalled = { revision: head, reason, removed, total }
      return
    }
    this.stalled = null
    // History first: a rule must never be served without its creation and modification metadata.
    await catchUpHistory(this.repo, this.history, head, this.logger, memo)
    this.catalog.publish(next())
    // A full build is the expensive case the persisted index exists for: save it now, not later.
    if (fullBuild) this.catalog.saveSoon()
  }

  async close(): Promise<void> {
    await this.writer.idle()
    await this.catalog.close()
    this.repo.close()
  }
}


