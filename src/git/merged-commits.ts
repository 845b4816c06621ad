// The commits a merge brought in: reachable from its second (and later) parents but not from its
// first — what `git rev-list M^1..M^2` lists — found by painting both sides newest first (as git's
// merge-base walk does), so neither side's whole history is read. Bounded: a merge of a branch
// with thousands of commits is cut at `limit` (its newest ones are kept).
import type { CommitInfo } from './git-commit.js'

const THEIRS = 1
const OURS = 2

interface CommitReader {
  readCommit(oid: string): Promise<CommitInfo>
}

/** The merged commits of `merge`, newest first (empty for a commit with one parent). */
export async function mergedCommits(db: CommitReader, merge: CommitInfo, limit = 1000): Promise<CommitInfo[]> {
  if (merge.parents.length < 2) return []
  const flags = new Map<string, number>()
  const commits = new Map<string, CommitInfo>()
  const queue: CommitInfo[] = []
  const queued = new Set<string>()
  const push = async (oid: string, flag: number) => {
    const had = flags.get(oid) ?? 0
    if ((had | flag) === had) return
    flags.set(oid, had | flag)
    // Queued again when a taken commit gains a flag: the new flag must reach its parents too.
    if (queued.has(oid)) return
    let c = commits.get(oid)
    if (!c) commits.set(oid, (c = await db.readCommit(oid)))
    queued.add(oid)
    // Kept newest first: a binary search for its place rather than a sort per step.
    let lo = 0
    let hi = queue.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (queue[mid]!.committer.timestamp >= c.committer.timestamp) lo = mid + 1
      else hi = mid
    }
    queue.splice(lo, 0, c)
  }
  await push(merge.parents[0]!, OURS)
  for (const p of merge.parents.slice(1)) await push(p, THEIRS)
  const out: CommitInfo[] = []
  let steps = 0
  // Until only our side is left: then nothing older can be theirs alone.
  while (queue.some((c) => flags.get(c.oid) === THEIRS) && steps++ < limit * 5) {
    const c = queue.shift()!
    queued.delete(c.oid)
    const f = flags.get(c.oid)!
    if (f === THEIRS && !out.includes(c)) {
      out.push(c)
      if (out.length >= limit) break
    }
    for (const p of c.parents) await push(p, f)
  }
  // A commit taken as theirs and reached from our side later (clock skew) is ours after all.
  return out.filter((c) => flags.get(c.oid) === THEIRS)
}
