// Opening the rules service: creates the repository from the template on first start (or the local
// copy of the remote), then composes its one-way parts — the catalog (catalog.ts: the published
// index, history, `exclusive`, `publish`), the follower (follower.ts: pull, follow the tip, sync with
// the mass-delete guard) and the writer (rule-writer.ts, planning with write-plan.ts) — loads the
// index and catches the history up. RuleStore is a thin facade over those parts for the call sites
// (routes, tests, benches) that still reach `store.index`, `store.writer` and the like.
import fsp from 'node:fs/promises'
import path from 'node:path'
import type { EngineRegistry } from '../engine/engine.js'
import type { Logger } from '../log.js'
import type { Registry } from '../metrics.js'
import type { RuleIndex } from '../rules/rule-index.js'
import type { Person } from '../git/git-commit.js'
import { ObjectBatch } from '../git/write-object-loose.js'
import { GitRepository } from '../git/repository.js'
import type { FileChanges } from '../git/tree-edit.js'
import type { GitRemote } from '../git/remote.js'
import type { HistoryTracker } from './history.js'
import { RuleCatalog } from './catalog.js'
import { RevisionFollower, type MassDeleteGuard } from './follower.js'
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
  massDelete?: MassDeleteGuard
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
async function commitTemplate(
  repo: GitRepository,
  templateDir: string,
  committer: { name: string; email: string },
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
  return commit
}

/** Creates a bare repository holding the template as one initial commit by the `system` actor. */
export async function createRepositoryFromTemplate(
  gitdir: string,
  branch: string,
  templateDir: string,
  committer: { name: string; email: string },
): Promise<GitRepository> {
  const repo = await GitRepository.init(gitdir, branch)
  await repo.moveBranch(null, await commitTemplate(repo, templateDir, committer))
  return repo
}

export class RuleStore {
  /** The published index, its history metadata and the one lane for changing them. */
  readonly catalog: RuleCatalog
  /** Pulls the remote, follows the branch tip, guards against mass deletions. */
  readonly follower: RevisionFollower
  readonly writer: RuleWriter
  readonly metrics: StoreMetrics

  private constructor(
    readonly repo: GitRepository,
    readonly engines: EngineRegistry,
    readonly committer: { name: string; email: string },
    readonly logger: Logger,
    cacheDir: string | null,
    registry: Registry,
    readonly remote: GitRemote | undefined,
    massDelete: MassDeleteGuard | undefined,
  ) {
    this.catalog = new RuleCatalog({ cacheDir, engineKinds: Object.keys(engines), logger })
    this.follower = new RevisionFollower({ catalog: this.catalog, repo, engines, logger, remote, massDelete })
    this.metrics = writerMetrics(registry)
    this.writer = new RuleWriter({
      catalog: this.catalog,
      follower: this.follower,
      repo,
      remote,
      engines,
      committer,
      logger,
      metrics: this.metrics,
    })
  }

  static async open(o: RuleStoreOptions): Promise<RuleStore> {
    let repo: GitRepository
    if (GitRepository.exists(o.gitdir)) repo = await GitRepository.open(o.gitdir, o.branch)
    else if (o.remote) {
      o.logger.info(
        { gitdir: o.gitdir, remote: o.remote.displayUrl },
        'creating the local copy of the remote rules repository',
      )
      repo = await GitRepository.init(o.gitdir, o.branch)
    } else {
      o.logger.info({ gitdir: o.gitdir }, 'creating the rules repository from the template')
      repo = await createRepositoryFromTemplate(o.gitdir, o.branch, o.templateDir, o.committer)
    }
    const store = new RuleStore(repo, o.engines, o.committer, o.logger, o.cacheDir, o.metrics, o.remote, o.massDelete)
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
      } else if (tip !== null) await store.follower.followRemoteTip(tip)
    }
    await store.follower.syncToTip({ allowMassDelete: true })
    return store
  }

  // The facade: what call sites outside the parts still reach through the store.

  /** The published index (the catalog's). */
  get index(): RuleIndex {
    return this.catalog.index
  }

  get history(): HistoryTracker {
    return this.catalog.history
  }

  async close(): Promise<void> {
    await this.writer.idle()
    await this.catalog.close()
    this.repo.close()
  }
}
