// The follower: brings the published catalog to the tip of the local branch, and in remote mode the
// local branch to the remote's tip (the remote is the truth). Following a revision diffs its tree
// against the published one once, re-reads only the changed files into a draft (a full build when
// history was rewritten) and checks their Python (python-check.ts), holds back a revision that would delete too many rules until a person
// confirms it (the mass-delete guard), catches the history metadata up and publishes.
import type { EngineRegistry } from '../engine/engine.js'
import type { Logger } from '../log.js'
import { RuleIndex } from '../rules/rule-index.js'
import type { GitRepository } from '../git/repository.js'
import type { GitRemote } from '../git/remote.js'
import { unavailable } from '../errors.js'
import type { RuleCatalog } from './catalog.js'
import { hasUncheckedPython } from './python-check.js'
import {
  catchUpHistory,
  loadFullRevision,
  putBadNames,
  reindexPaths,
  syncPython,
  type IdentityMemo,
} from './revision-sync.js'

/** A revision the follower refused to apply, waiting for a person. */
export interface StalledRevision {
  revision: string
  reason: string
  removed: number
  total: number
}

/** What following the branch tip did. `filesChanged`: the tree diff from the published revision. */
export type SyncResult =
  | { kind: 'unchanged' }
  | { kind: 'applied'; revision: string | null; filesChanged: number }
  | { kind: 'held'; stalled: StalledRevision; filesChanged: number }
  /** git.verify: the tip's commit is not signed by an allowed key; the last verified revision serves. */
  | { kind: 'unverified'; revision: string; reason: string; filesChanged: 0 }

/** The mass-deletion guard: a revision removing more than `share` of the rules, and at least `min`. */
export interface MassDeleteGuard {
  share: number
  min: number
}

export interface FollowerDeps {
  catalog: RuleCatalog
  repo: GitRepository
  engines: EngineRegistry
  logger: Logger
  remote?: GitRemote
  massDelete?: MassDeleteGuard
  /** rules.maxFileBytes: a file over it is invalid and never read. */
  maxFileBytes?: number
  /** git.verify: why a revision may not be served (its tip is not signed by an allowed key), or null. */
  verify?: (revision: string) => Promise<string | null>
}

/** How far back a revision is looked for on the first-parent chain before a full build is chosen. */
const ANCESTRY_LIMIT = 100_000

export class RevisionFollower {
  /** Set while a mass deletion waits for confirmation. */
  stalled: StalledRevision | null = null
  /** Set while the branch tip is a revision git.verify refuses (the last verified one serves). */
  unverified: { revision: string; reason: string } | null = null
  private allowedMassDelete: string | null = null
  private syncing: Promise<SyncResult> | null = null
  private readonly catalog: RuleCatalog
  private readonly repo: GitRepository
  private readonly engines: EngineRegistry
  private readonly logger: Logger
  readonly remote: GitRemote | undefined
  private readonly massDelete: MassDeleteGuard
  private readonly maxFileBytes: number | undefined
  private readonly verify: FollowerDeps['verify']

  constructor(d: FollowerDeps) {
    this.catalog = d.catalog
    this.repo = d.repo
    this.engines = d.engines
    this.logger = d.logger
    this.remote = d.remote
    this.massDelete = d.massDelete ?? { share: 0.5, min: 10 }
    this.maxFileBytes = d.maxFileBytes
    this.verify = d.verify
  }

  /** The local branch's tip. */
  head(): Promise<string | null> {
    return this.repo.head()
  }

  /** Moves the local branch to the fetched remote tip (the remote is the truth). */
  async followRemoteTip(tip: string): Promise<void> {
    const head = await this.repo.head()
    if (head !== tip) await this.repo.moveBranch(head, tip)
  }

  /** Fetches the remote and follows it (in embedded mode: the branch's tip); serialized with writes. */
  async pullRemote(): Promise<{ tip: string | null }> {
    if (!this.remote) return { tip: await this.repo.head() }
    const remote = this.remote
    return this.catalog.exclusive(async () => {
      const tip = await remote.fetch()
      if (tip) await this.followRemoteTip(tip)
      return { tip }
    })
  }

  /** A person confirmed the mass deletion of `revision`: apply it on the next sync. */
  allowMassDelete(revision: string | null): void {
    this.allowedMassDelete = revision
  }

  /**
   * Follows the local branch if it moved (plain git pushes, a pulled remote); single flight. A
   * revision that would delete too many rules is not applied: `stalled` says why until a person
   * confirms or the revision changes.
   */
  syncToTip(opts: { allowMassDelete?: boolean; retryUncheckedPython?: boolean } = {}): Promise<SyncResult> {
    if (!this.syncing) {
      this.syncing = this.doSync(opts.allowMassDelete === true, opts.retryUncheckedPython === true).finally(() => {
        this.syncing = null
      })
    }
    return this.syncing
  }

  /** For writers: the index is at the branch tip, or the reason it cannot be (a 503). */
  async syncForWrite(): Promise<void> {
    await this.syncToTip()
    // A write on an unverified tip would sign its content into the service's own commit: refused.
    if (this.unverified)
      throw unavailable(
        `writes are paused: the branch tip is not verified (${this.unverified.reason}); the last verified revision is served`,
      )
    if (this.stalled)
      throw unavailable(
        `writes are paused: ${this.stalled.reason}; confirm with POST /reconcile?allow-mass-delete=true`,
      )
  }

  private async doSync(allowAll: boolean, retryUnchecked: boolean): Promise<SyncResult> {
    const { catalog, repo, maxFileBytes } = this
    const current = catalog.index
    const head = await repo.head()
    if (head === current.revision) {
      this.stalled = null
      this.unverified = null
      // A persisted index can be newer than the history cache (they are saved separately).
      if (head && catalog.history.head !== head)
        await catchUpHistory(repo, catalog.history, head, this.logger, undefined, { maxFileBytes })
      // Python files that could not be checked (no sandbox then): a reconcile checks them again.
      if (head && retryUnchecked && hasUncheckedPython(current)) {
        const draft = current.draft()
        await syncPython(repo, head, draft, [], this.engines, {
          before: current,
          retryUnchecked,
          log: this.logger,
          maxFileBytes,
        })
        catalog.publish(draft.publish(head))
      }
      return { kind: 'unchanged' }
    }
    if (!head) {
      catalog.publish(RuleIndex.empty())
      catalog.history.reset()
      return { kind: 'applied', revision: null, filesChanged: 0 }
    }
    if (this.verify) {
      // Checked again on every sync: a key added to the allowed signers lets the held tip through.
      const reason = await this.verify(head)
      if (reason !== null) {
        if (this.unverified?.revision !== head) this.logger.warn({ revision: head, reason }, 'unverified revision held')
        this.unverified = { revision: head, reason }
        return { kind: 'unverified', revision: head, reason, filesChanged: 0 }
      }
    }
    this.unverified = null
    const total = current.rules.size
    let removed = 0
    let filesChanged = 0
    let next: () => RuleIndex
    const memo: IdentityMemo = new Map()
    let fullBuild = false
    if (current.revision && (await repo.isFirstParentAncestor(current.revision, head, ANCESTRY_LIMIT))) {
      // The one tree diff of this revision: it drives the reindex and is what a reconcile reports.
      const diffs = await repo.diff(current.revision, head)
      filesChanged = diffs.length
      const draft = current.draft()
      putBadNames(
        draft,
        diffs.map((d) => ({ ...d, present: d.newOid !== null })),
      )
      const changed = diffs.filter((d) => !d.badName).map((d) => d.path)
      const reread = await reindexPaths(repo, head, draft, changed, this.engines, { memo, maxFileBytes })
      await syncPython(repo, head, draft, reread, this.engines, {
        before: current,
        retryUnchecked,
        log: this.logger,
        maxFileBytes,
      })
      removed = draft.removedRuleCount()
      next = () => draft.publish(head)
    } else {
      // History rewritten (or a first build): everything is read again.
      if (current.revision) filesChanged = (await repo.diff(current.revision, head)).length
      const full = await loadFullRevision(repo, head, RuleIndex.empty(), this.engines, this.logger, {
        memo,
        maxFileBytes,
      })
      fullBuild = true
      for (const id of current.rules.keys()) if (!full.rules.has(id)) removed++
      next = () => full
    }
    const guard = this.massDelete
    if (!allowAll && this.allowedMassDelete !== head && removed >= guard.min && removed > total * guard.share) {
      // Nothing was published: the draft is dropped and the current index keeps serving.
      const reason = `revision ${head.slice(0, 12)} would delete ${removed} of ${total} rules (more than ${Math.round(guard.share * 100)}%)`
      if (this.stalled?.revision !== head)
        this.logger.warn({ revision: head, removed, total }, 'mass deletion held back')
      this.stalled = { revision: head, reason, removed, total }
      return { kind: 'held', stalled: this.stalled, filesChanged }
    }
    this.stalled = null
    // History first: a rule must never be served without its creation and modification metadata.
    await catchUpHistory(repo, catalog.history, head, this.logger, memo, { maxFileBytes })
    catalog.publish(next())
    // A full build is the expensive case the persisted index exists for: save it now, not later.
    if (fullBuild) catalog.saveSoon()
    return { kind: 'applied', revision: head, filesChanged }
  }
}
