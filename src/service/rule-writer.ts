// The one writer of the repository: an in-process queue whose pending writes are committed as a
// chain (one commit per write) with one round of fsyncs and one compare-and-swap of the branch:
// group commit. If the branch moved under a batch (a plain `git push`) or, with a remote, the push
// was rejected because the remote moved, the index catches up and the batch is rebuilt on the new
// tip, re-checking every precondition (If-Match included, judged on the tree the write commits on): for a time budget, pushing fewer writes per attempt while
// the tip keeps moving (see RetryPolicy and docs/decisions.md). What it uses is passed in
// (WriterDeps: the catalog it publishes to, the follower, the repository, the remote, metrics);
// what one write changes is planned by write-plan.ts.
import { RulekeeperError, unavailable } from '../errors.js'
import type { EngineRegistry } from '../engine/engine.js'
import type { Logger } from '../log.js'
import { Counter, type Registry } from '../metrics.js'
import { RemoteError, type GitRemote } from '../git/remote.js'
import type { RuleIndex } from '../rules/rule-index.js'
import type { Person } from '../git/git-commit.js'
import type { GitRepository } from '../git/repository.js'
import { ObjectBatch } from '../git/write-object-loose.js'
import { RefConflictError } from '../git/ref-cas.js'
import { ruleEtag } from './etag.js'
import { checkWriteQuota, type RepositoryBounds } from './write-quota.js'
import type { ServiceCommits } from './service-commits.js'
import type { CommitFileChange, HistoryTracker } from './history.js'
import { applyToDraft, commitMessage, planWrite, treeReader, type WriteOp, type WriteOutcome } from './write-plan.js'

export { commitMessage, type WriteActor, type WriteOp, type WriteOutcome } from './write-plan.js'

/** The published catalog a writer builds on and publishes to (catalog.ts). */
interface WriteCatalog {
  readonly index: RuleIndex
  readonly history: Pick<HistoryTracker, 'apply'>
  /** Runs `fn` with no other write batch or remote pull in progress. */
  exclusive<T>(fn: () => Promise<T>): Promise<T>
  publish(index: RuleIndex): void
}

/** How a writer brings the index to the branch tip before building (the follower, follower.ts). */
interface WriteSync {
  /** The index is at the branch tip, or throws the reason it cannot be (a 503). */
  syncForWrite(): Promise<void>
  /** Moves the local branch to a tip the remote has. */
  followRemoteTip(tip: string): Promise<void>
}

export interface WriterMetrics {
  commits: Counter
  rebuilds: Counter
  pushRetries: Counter
}

export function writerMetrics(registry: Registry): WriterMetrics {
  return {
    commits: new Counter({
      name: 'rulekeeper_commits_total',
      help: 'Commits made by API writes',
      registers: [registry],
    }),
    rebuilds: new Counter({
      name: 'rulekeeper_write_rebuilds_total',
      help: 'Write batches rebuilt because the branch moved',
      registers: [registry],
    }),
    pushRetries: new Counter({
      name: 'rulekeeper_push_retries_total',
      help: 'Pushes retried after the remote moved',
      registers: [registry],
    }),
  }
}

/** Everything the writer uses, passed in: it reaches into nothing else. */
export interface WriterDeps {
  catalog: WriteCatalog
  follower: WriteSync
  repo: GitRepository
  /** With a remote, a write counts once the remote has it. */
  remote?: GitRemote
  engines: EngineRegistry
  committer: { name: string; email: string }
  logger: Logger
  metrics: WriterMetrics
  /** The repository's limits a write may not take it past (none: the defaults). */
  bounds?: RepositoryBounds
  /** Where the commits made here are recorded before the branch or the remote points at them. */
  serviceCommits: ServiceCommits
}

interface Pending {
  op: WriteOp
  resolve(o: WriteOutcome): void
  reject(e: unknown): void
}

const MAX_BATCH = 64

/** How a batch retries when the branch or the remote moves under it (see docs/decisions.md). */
export interface RetryPolicy {
  /**
   * Retrying stops when none of the batch's writes went through for this long (since the batch
   * started or since its last successful attempt): the writes not made answer 503.
   */
  budgetMs: number
  /** And in any case once the batch has taken this long (a bound on how long a caller waits). */
  capMs: number
  /**
   * Rejections in a row after which fewer writes go per attempt (halved, down to one): a smaller
   * attempt is built and pushed sooner, so a busy remote has less time to move under it. Each
   * attempt that goes through doubles the size again.
   */
  splitAfter: number
  /** Backoff before retry n: a random delay in [0, min(maxMs, firstMs * 2^(n-1))). */
  backoff: { firstMs: number; maxMs: number }
  /** For this long after a push was refused, a batch fetches the remote's tip before building. */
  contendedMs: number
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  budgetMs: 20_000,
  capMs: 60_000,
  splitAfter: 1,
  backoff: { firstMs: 10, maxMs: 100 },
  contendedMs: 5_000,
}

function backoffMs(policy: RetryPolicy, retry: number): number {
  const ceiling = Math.min(policy.backoff.maxMs, policy.backoff.firstMs * 2 ** Math.min(retry - 1, 20))
  return Math.random() * ceiling
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

export class RuleWriter {
  private queue: Pending[] = []
  private running = false
  /** Replaceable (tests use a short budget). */
  policy: RetryPolicy = DEFAULT_RETRY_POLICY
  /** When a batch last found the branch or the remote moved (0: never). */
  private lastMovedAt = 0

  constructor(private readonly deps: WriterDeps) {}

  submit(op: WriteOp): Promise<WriteOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ op, resolve, reject })
      if (!this.running) void this.drain()
    })
  }

  /** Waits until every queued write is done (used at shutdown). */
  async idle(): Promise<void> {
    while (this.running || this.queue.length > 0) await sleep(5)
  }

  private async drain(): Promise<void> {
    this.running = true
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_BATCH)
        // Every write of the batch is settled by commitBatch (a settled promise ignores a second call).
        await this.commitBatch(batch).catch((err: unknown) => {
          for (const p of batch) p.reject(err)
        })
      }
    } finally {
      this.running = false
    }
  }

  private commitBatch(batch: Pending[]): Promise<void> {
    return this.deps.catalog.exclusive(() => this.commitBatchExclusive(batch))
  }

  /**
   * Commits the batch, retrying while the branch (or the remote) moves under it: each retry rebuilds
   * the writes still pending on the new tip, re-checking every precondition. After `splitAfter`
   * rejections in a row fewer writes go per attempt (halved, down to one), so progress is made even
   * while the remote moves constantly. When the time budget is spent, the writes not yet made answer
   * 503 and nothing of them is left behind (the local branch only ever follows the remote's tip).
   */
  private async commitBatchExclusive(batch: Pending[]): Promise<void> {
    const policy = this.policy
    const started = Date.now()
    let progressAt = started
    let rest = batch
    let size = batch.length
    let retries = 0 // since the last progress
    let streak = 0
    // While the remote is busy, look at its tip first rather than push on a stale one and be refused.
    let fetchFirst = this.deps.remote !== undefined && started - this.lastMovedAt < policy.contendedMs
    try {
      while (rest.length > 0) {
        const part = rest.slice(0, size)
        const moved = await this.attempt(part, fetchFirst)
        if (!moved) {
          rest = rest.slice(part.length)
          progressAt = Date.now()
          retries = 0
          streak = 0
          fetchFirst = false
          size = Math.min(MAX_BATCH, size * 2) // it went through: try more at once again
          continue
        }
        this.lastMovedAt = Date.now()
        retries++
        streak++
        const now = Date.now()
        const elapsed = now - progressAt
        if (elapsed >= policy.budgetMs || now - started >= policy.capMs) {
          const what =
            moved === 'remote'
              ? `the remote ${this.deps.remote?.displayUrl ?? ''} kept moving`
              : 'the branch kept moving (commits pushed into the repository)'
          this.deps.logger.warn(
            { writes: rest.length, made: batch.length - rest.length, retries, ms: now - started },
            'write retry budget spent',
          )
          throw unavailable(
            `${what}: retried ${retries} ${retries === 1 ? 'time' : 'times'} in ${(elapsed / 1000).toFixed(1)} s; the write was not made, try again`,
          )
        }
        if (streak >= policy.splitAfter && size > 1) {
          size = Math.ceil(size / 2)
          streak = 0
        }
        // The backoff comes before looking at the new tip: the time from seeing it to pushing is
        // what a concurrent push can spoil.
        await sleep(backoffMs(policy, retries))
        fetchFirst = moved === 'remote'
      }
    } catch (err) {
      for (const p of rest) p.reject(err)
    }
  }

  /**
   * One attempt at committing `part` on the current tip (the remote's, fetched first when asked).
   * Settles every write of `part` and returns false, or returns where the tip moved: nothing of
   * `part` was settled or kept, and the caller retries.
   */
  private async attempt(part: Pending[], fetchFirst: boolean): Promise<false | 'remote' | 'branch'> {
    const { catalog, follower, repo, remote, metrics, logger } = this.deps
    if (fetchFirst && remote) {
      let tip: string | null
      try {
        tip = await remote.fetch()
      } catch (err) {
        throw err instanceof RemoteError ? unavailable(err.message) : err
      }
      if (tip) await follower.followRemoteTip(tip)
    }
    await follower.syncForWrite()
    const base = catalog.index
    const draft = base.draft()
    const objects = new ObjectBatch()
    let parent = base.revision
    let tree = await repo.treeOf(parent)
    const outcomes: Array<WriteOutcome | RulekeeperError> = []
    const commits: Array<{ oid: string; message: string; author: Person; changes: CommitFileChange[] }> = []
    const quota = checkWriteQuota(base, this.deps.bounds)
    for (const p of part) {
      try {
        const planned = await planWrite(repo, p.op, draft, tree, objects)
        if (!planned) {
          const rule = draft.ruleById(p.op.id)
          outcomes.push({ status: 'unchanged', commit: null, rule, etag: rule && (await ruleEtag(repo, tree, rule)) })
          continue
        }
        // Refused (409) when it would take the repository past a limit; nothing of it is kept.
        await quota.admit(repo, tree, objects, planned)
        const now = Math.floor(Date.now() / 1000)
        const author: Person = { name: p.op.actor.name, email: p.op.actor.email, timestamp: now, tzOffsetMinutes: 0 }
        const committer: Person = { ...this.deps.committer, timestamp: now, tzOffsetMinutes: 0 }
        const message = commitMessage(planned.verb, p.op)
        const built = await repo.buildCommit(
          objects,
          { parent, changes: planned.changes, author, committer, message },
          tree,
        )
        parent = built.commit
        tree = built.tree
        await applyToDraft(draft, planned.changes, this.deps.engines, treeReader(repo, objects, tree))
        commits.push({
          oid: built.commit,
          message,
          author,
          changes: [...planned.changes].map(([p2, c]) => ({ path: p2, text: c === null ? null : c.toString('utf8') })),
        })
        const rule = planned.status === 'deleted' ? undefined : draft.ruleById(p.op.id)
        const etag = rule && (await ruleEtag(repo, tree, rule))
        outcomes.push({ status: planned.status, commit: built.commit, rule, etag })
      } catch (err) {
        if (!(err instanceof RulekeeperError)) throw err
        outcomes.push(err)
      }
    }
    let published = true
    if (commits.length > 0) {
      await repo.writeObjects(objects)
      // Recorded first (a crash after the push must not leave our commits looking like anyone's),
      // made durable after: an fsync here would widen the span a concurrent push can spoil.
      await this.deps.serviceCommits.record(commits.map((c) => c.oid))
      if (remote) {
        // The remote is the truth: the writes count only once the remote has them.
        try {
          await remote.push(parent!, base.revision)
        } catch (err) {
          if (err instanceof RemoteError && err.kind === 'rejected') {
            metrics.pushRetries.inc()
            return 'remote' // the next attempt fetches the new tip and rebuilds on it
          }
          if (!(err instanceof RemoteError)) throw err
          logger.warn({ reason: err.kind, msg: err.message, detail: err.detail }, 'a write batch could not be pushed')
          throw unavailable(err.message)
        }
        // Pushed: the writes are made whatever happens next; the local branch just follows.
        published = await this.followPushed(parent!)
      } else {
        try {
          await repo.moveBranch(base.revision, parent!)
        } catch (err) {
          if (!(err instanceof RefConflictError)) throw err
          metrics.rebuilds.inc()
          return 'branch' // the next attempt catches the index up and rebuilds on the new tip
        }
      }
      // The writes are made: a failed fsync of the record costs at most their attribution after a
      // power cut (they would read as their author's), never the writes.
      await this.deps.serviceCommits.sync().catch((err: Error) => {
        logger.warn({ msg: err.message }, 'the record of the service commits could not be synced')
      })
      if (published) {
        for (const c of commits) catalog.history.apply(c, c.changes)
        catalog.publish(draft.publish(parent))
      }
      metrics.commits.inc(commits.length)
    }
    part.forEach((p, i) => {
      const o = outcomes[i]!
      if (o instanceof RulekeeperError) p.reject(o)
      else p.resolve(o)
    })
    return false
  }

  /**
   * Moves the local branch to a commit the remote just accepted. Never a reason to rebuild (that
   * would push the writes twice) nor to refuse them (they are made): if the local branch cannot
   * follow, the writes are acknowledged anyway and the next fetch and sync catch up.
   */
  private async followPushed(commit: string): Promise<boolean> {
    for (let i = 0; ; i++) {
      try {
        await this.deps.follower.followRemoteTip(commit)
        return true
      } catch (err) {
        if (err instanceof RefConflictError && i < 4) {
          await sleep(20)
          continue
        }
        this.deps.logger.warn(
          { commit, msg: (err as Error).message },
          'pushed, but the local branch could not follow; the next sync catches up',
        )
        return false
      }
    }
  }
}
