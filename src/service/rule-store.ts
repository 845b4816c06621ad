// The rules service's state: the repository, the current immutable index, the history metadata
// and the writer. Opening it creates the repository from the template on first start, loads the
// index and catches the history up; syncToTip() follows commits pushed into it with plain git.
import fsp from 'node:fs/promises'
import path from 'node:path'
import type { EngineRegistry } from '../engine/engine.js'
import type { Logger } from '../log.js'
import { Counter, type Registry } from '../metrics.js'
import { RuleIndex } from '../rules/rule-index.js'
import { ObjectBatch, type Person } from '../store/object-db.js'
import { GitRepository } from '../store/repository.js'
import type { FileChanges } from '../store/tree-edit.js'
import { HistoryTracker } from './history.js'
import { catchUpHistory, loadFullRevision, reindexPaths } from './revision-sync.js'
import { RuleWriter } from './rule-writer.js'

export interface RuleStoreOptions {
  gitdir: string
  branch: string
  committer: { name: string; email: string }
  engines: EngineRegistry
  templateDir: string
  cacheDir: string | null
  logger: Logger
  metrics: Registry
}

export interface StoreMetrics {
  commits: Counter
  rebuilds: Counter
}

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

/** Creates a bare repository holding the template as one initial commit by the `system` actor. */
export async function createRepositoryFromTemplate(gitdir: string, branch: string, templateDir: string, committer: { name: string; email: string }): Promise<GitRepository> {
  const repo = await GitRepository.init(gitdir, branch)
  const now = Math.floor(Date.now() / 1000)
  const who: Person = { ...committer, timestamp: now, tzOffsetMinutes: 0 }
  const batch = new ObjectBatch()
  const message = 'Initialize rules repository from template\n\nActor-Id: system\nActor-Type: system\n'
  const { commit } = await repo.buildCommit(batch, { parent: null, changes: await readTemplate(templateDir), author: who, committer: who, message })
  await repo.writeObjects(batch)
  await repo.moveBranch(null, commit)
  return repo
}

export class RuleStore {
  index: RuleIndex = RuleIndex.empty()
  readonly writer: RuleWriter
  readonly history: HistoryTracker
  readonly metrics: StoreMetrics
  private syncing: Promise<void> | null = null

  private constructor(
    readonly repo: GitRepository,
    readonly engines: EngineRegistry,
    readonly committer: { name: string; email: string },
    readonly logger: Logger,
    cacheDir: string | null,
    registry: Registry,
  ) {
    this.history = new HistoryTracker(cacheDir ? path.join(cacheDir, 'history.json') : null)
    this.writer = new RuleWriter(this)
    this.metrics = {
      commits: new Counter({ name: 'rulekeeper_commits_total', help: 'Commits made by API writes', registers: [registry] }),
      rebuilds: new Counter({ name: 'rulekeeper_write_rebuilds_total', help: 'Write batches rebuilt because the branch moved', registers: [registry] }),
    }
  }

  static async open(o: RuleStoreOptions): Promise<RuleStore> {
    let repo: GitRepository
    if (GitRepository.exists(o.gitdir)) repo = await GitRepository.open(o.gitdir, o.branch)
    else {
      o.logger.info({ gitdir: o.gitdir }, 'creating the rules repository from the template')
      repo = await createRepositoryFromTemplate(o.gitdir, o.branch, o.templateDir, o.committer)
    }
    const store = new RuleStore(repo, o.engines, o.committer, o.logger, o.cacheDir, o.metrics)
    await store.history.loadCache()
    await store.syncToTip()
    return store
  }

  publish(index: RuleIndex): void {
    this.index = index
  }

  /** Follows the branch if it moved (plain git pushes); single flight. */
  syncToTip(): Promise<void> {
    if (!this.syncing) {
      this.syncing = this.doSync().finally(() => {
        this.syncing = null
      })
    }
    return this.syncing
  }

  private async doSync(): Promise<void> {
    const head = await this.repo.head()
    if (head === this.index.revision) return
    if (!head) {
      this.publish(RuleIndex.empty())
      this.history.reset()
      return
    }
    const chain = this.index.revision ? await this.repo.firstParentChain(this.index.revision, head, 100_000) : null
    if (this.index.revision && chain) {
      const changed = (await this.repo.diff(this.index.revision, head)).map((d) => d.path)
      const draft = this.index.draft()
      await reindexPaths(this.repo, head, draft, changed, this.engines)
      this.publish(draft.publish(head))
    } else {
      this.publish(await loadFullRevision(this.repo, head, RuleIndex.empty(), this.engines, this.logger))
    }
    await catchUpHistory(this.repo, this.history, head, this.logger)
  }

  async close(): Promise<void> {
    await this.writer.idle()
    this.history.close()
  }
}


