// Painting commits newest first, as git's merge-base walk does: each commit carries the flags of the
// sides that reach it, and a commit is queued again when it gains a flag (the flag must reach its
// parents too). The walks over two histories (merged-commits.ts, merge-base.ts) take commits from
// here in committer-time order, so neither side's whole history is read.
import { partitionPoint } from '../sorted-search.js'
import type { CommitInfo } from './git-commit.js'

export interface CommitReader {
  readCommit(oid: string): Promise<CommitInfo>
}

export class CommitPaint {
  private readonly flags = new Map<string, number>()
  private readonly commits = new Map<string, CommitInfo>()
  private readonly queued = new Set<string>()
  /** Newest first by committer time. */
  readonly queue: CommitInfo[] = []

  constructor(private readonly db: CommitReader) {}

  flagsOf(oid: string): number {
    return this.flags.get(oid) ?? 0
  }

  /** Adds `flag` to `oid`; queues it when that is new for it. */
  async paint(oid: string, flag: number): Promise<void> {
    const had = this.flags.get(oid) ?? 0
    if ((had | flag) === had) return
    this.flags.set(oid, had | flag)
    if (this.queued.has(oid)) return
    let c = this.commits.get(oid)
    if (!c) this.commits.set(oid, (c = await this.db.readCommit(oid)))
    this.queued.add(oid)
    // Kept newest first: a binary search for its place rather than a sort per step.
    const time = c.committer.timestamp
    this.queue.splice(
      partitionPoint(this.queue.length, (i) => this.queue[i]!.committer.timestamp >= time),
      0,
      c,
    )
  }

  /** The newest queued commit, taken off the queue. */
  next(): CommitInfo | undefined {
    const c = this.queue.shift()
    if (c) this.queued.delete(c.oid)
    return c
  }
}
