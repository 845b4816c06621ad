// The commits a merge brought in: reachable from its second (and later) parents but not from its
// first — what `git rev-list M^1..M^2` lists — found by painting both sides newest first
// (commit-paint.ts), so neither side's whole history is read. Bounded: a merge of a branch with
// thousands of commits is cut at `limit` (its newest ones are kept).
import { CommitPaint, type CommitReader } from './commit-paint.js'
import type { CommitInfo } from './git-commit.js'

const THEIRS = 1
const OURS = 2

/** The merged commits of `merge`, newest first (empty for a commit with one parent). */
export async function mergedCommits(db: CommitReader, merge: CommitInfo, limit = 1000): Promise<CommitInfo[]> {
  if (merge.parents.length < 2) return []
  const paint = new CommitPaint(db)
  await paint.paint(merge.parents[0]!, OURS)
  for (const p of merge.parents.slice(1)) await paint.paint(p, THEIRS)
  const out: CommitInfo[] = []
  let steps = 0
  // Until only our side is left: then nothing older can be theirs alone.
  while (paint.queue.some((c) => paint.flagsOf(c.oid) === THEIRS) && steps++ < limit * 5) {
    const c = paint.next()!
    const f = paint.flagsOf(c.oid)
    if (f === THEIRS && !out.includes(c)) {
      out.push(c)
      if (out.length >= limit) break
    }
    for (const p of c.parents) await paint.paint(p, f)
  }
  // A commit taken as theirs and reached from our side later (clock skew) is ours after all.
  return out.filter((c) => paint.flagsOf(c.oid) === THEIRS)
}
