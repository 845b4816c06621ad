// The merge base of two commits, as `git merge-base A B` answers it: the newest commit both reach,
// found by painting both sides newest first (commit-paint.ts). A commit both sides reach is a
// candidate and everything below it is stale (an older common ancestor is no best one); the walk
// ends when only stale commits are queued. Bounded by `limit` commits taken (null past it).
import { CommitPaint, type CommitReader } from './commit-paint.js'

const A = 1
const B = 2
const STALE = 4

/** The best common ancestor of `a` and `b` (the newest when several), or null when none (or past `limit`). */
export async function mergeBase(db: CommitReader, a: string, b: string, limit = 100_000): Promise<string | null> {
  if (a === b) return a
  const paint = new CommitPaint(db)
  await paint.paint(a, A)
  await paint.paint(b, B)
  const candidates: Array<{ oid: string; time: number }> = []
  let steps = 0
  while (paint.queue.some((c) => (paint.flagsOf(c.oid) & STALE) === 0)) {
    if (steps++ >= limit) return null
    const c = paint.next()!
    let f = paint.flagsOf(c.oid)
    if ((f & (A | B)) === (A | B) && (f & STALE) === 0) {
      candidates.push({ oid: c.oid, time: c.committer.timestamp })
      f |= STALE
    }
    for (const p of c.parents) await paint.paint(p, f)
  }
  // A candidate reached later from another candidate (clock skew) is its ancestor: no best one.
  const best = candidates.filter((c) => (paint.flagsOf(c.oid) & STALE) === 0)
  best.sort((x, y) => y.time - x.time)
  return best[0]?.oid ?? null
}
