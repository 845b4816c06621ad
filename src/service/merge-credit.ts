// Who a merged pull request is credited to: a merge commit (two or more parents) that is not the
// service's own names in the history the authors of the commits it brought in (merged-commits.ts),
// the one with the most commits first, and the merger (the merge commit's author) apart; and a
// merge message of GitHub's form ("Merge pull request #N from …", then the title) gives the reason.
import type { CommitInfo, Person } from '../git/git-commit.js'

/** Who made a commit (history.ts `Actor`, spelt here so the two modules do not import each other). */
interface Actor {
  id: string
  type: 'user' | 'api-token' | 'system'
}

export interface MergeCredit {
  /** The credited author: the one with the most merged commits (ties: the newest). */
  actor: Actor
  authorName: string
  /** Every author of the merged commits, the credited one first. */
  authors: Actor[]
  /** Who merged: the merge commit's author. */
  mergedBy: Actor
}

const userOf = (p: Person): Actor => ({ id: p.email || p.name, type: 'user' })

/**
 * The credit of a merge commit from its merged commits (newest first); null when `commit` is not a
 * merge or brought in no commit of its own (a merge commit of merges only counts their authors too).
 */
export function mergeCredit(
  commit: { parents?: readonly string[]; author: Person },
  merged: ReadonlyArray<Pick<CommitInfo, 'author' | 'parents'>> | undefined,
): MergeCredit | null {
  if (!merged || (commit.parents?.length ?? 0) < 2) return null
  // Merges inside the branch (main merged into it) are bookkeeping: their authors wrote nothing.
  const own = merged.filter((c) => c.parents.length < 2)
  const counted = own.length > 0 ? own : merged
  if (counted.length === 0) return null
  const tally = new Map<string, { actor: Actor; name: string; n: number; newest: number }>()
  counted.forEach((c, i) => {
    const a = userOf(c.author)
    const t = tally.get(a.id)
    if (t) t.n++
    else tally.set(a.id, { actor: a, name: c.author.name, n: 1, newest: i })
  })
  const ranked = [...tally.values()].sort((x, y) => y.n - x.n || x.newest - y.newest)
  return {
    actor: ranked[0]!.actor,
    authorName: ranked[0]!.name,
    authors: ranked.map((r) => r.actor),
    mergedBy: userOf(commit.author),
  }
}

const GITHUB_MERGE = /^Merge pull request #(\d+) from \S+$/

/**
 * The reason of a GitHub merge commit: "<title> (#N)" (the title is the message body's first
 * paragraph), "Pull request #N" without one; undefined for any other message.
 */
export function pullRequestReason(paragraphs: readonly string[]): string | undefined {
  const m = GITHUB_MERGE.exec(paragraphs[0] ?? '')
  if (!m) return undefined
  const title = paragraphs[1]?.replace(/\s+/g, ' ').trim()
  return title ? `${title} (#${m[1]})` : `Pull request #${m[1]}`
}
