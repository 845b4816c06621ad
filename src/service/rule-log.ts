// The index from rule id to its commits: every first-parent commit that changed one of the id's files
// (across all its lives, following moves), with the commit's parent, time, actor, author and reason
// kept once per commit. Fed by the history tracker (history.ts) as it applies each commit, persisted
// in the same cache file, so `GET /K/{id}/history` is a map lookup rather than a walk of the log.
import { pullRequestReason } from './merge-credit.js'
import { parseTrailers } from './trailers.js'

/** Who made a commit (history.ts `Actor`, spelt here so the two modules do not import each other). */
interface Actor {
  id: string
  type: 'user' | 'api-token' | 'system'
}

export type ChangeKind = 'created' | 'updated' | 'deleted' | 'moved'

export interface LogEntry {
  commit: string
  /** The commit's position on the first-parent chain (1 = the root): orders any two revisions. */
  seq: number
  change: ChangeKind
  /** The id's files this commit changed (old and new paths of a move, the `.py` companions). */
  paths: string[]
}

export interface CommitMeta {
  parent: string | null
  time: string
  actor: Actor
  authorName: string
  reason: string | null
  /** A merged pull request: who merged it, and every author of its commits (merge-credit.ts). */
  mergedBy?: Actor
  authors?: Actor[]
}

type StoredEntry = [commit: string, seq: number, change: ChangeKind, paths: string[]]
type StoredCommit = [
  oid: string,
  parent: string | null,
  time: string,
  actor: Actor,
  authorName: string,
  reason: string | null,
  merge?: [mergedBy: Actor, authors: Actor[]],
]

export interface StoredLog {
  seq: number
  commits: StoredCommit[]
  entries: Array<[string, StoredEntry[]]>
}

/**
 * The reason of a commit: its message without the subject line and the trailer paragraph (for the
 * service's commits, the caller's X-Change-Reason); for a plain-git commit without a body, its subject
 * (the only words a person wrote). null when there is nothing.
 */
export function commitReason(message: string): string | null {
  const paragraphs = message
    .replace(/\r\n?/g, '\n')
    .split(/\n[ \t]*\n/)
    .map((p) => p.trim())
    .filter((p) => p !== '')
  if (paragraphs.length === 0) return null
  const pullRequest = pullRequestReason(paragraphs)
  if (pullRequest !== undefined) return pullRequest
  const [subject, ...rest] = paragraphs
  const trailerCount = parseTrailers(message).size
  if (rest.length > 0 && trailerCount > 0) {
    const last = rest[rest.length - 1]!
    if (last.split('\n').every((l) => /^[A-Za-z0-9-]+: ?.*$/.test(l))) rest.pop()
  }
  const generated = trailerCount > 0 && parseTrailers(message).has('Rule-Id')
  if (rest.length > 0) return rest.join('\n\n')
  return generated ? null : (subject ?? null)
}

export class RuleLog {
  private entries = new Map<string, LogEntry[]>()
  private commits = new Map<string, CommitMeta>()
  /** The number of commits applied: the seq of the head. */
  seq = 0

  /** The id's entries, oldest first (never mutated by the caller). */
  of(id: string): readonly LogEntry[] {
    return this.entries.get(id) ?? []
  }

  commit(oid: string): CommitMeta | undefined {
    return this.commits.get(oid)
  }

  /** Starts the next commit: its seq. */
  next(): number {
    return ++this.seq
  }

  record(id: string, entry: LogEntry, meta: () => CommitMeta): void {
    if (!this.commits.has(entry.commit)) this.commits.set(entry.commit, meta())
    let list = this.entries.get(id)
    if (!list) this.entries.set(id, (list = []))
    list.push(entry)
  }

  store(): StoredLog {
    return {
      seq: this.seq,
      commits: [...this.commits].map(([oid, m]): StoredCommit => {
        const base: StoredCommit = [oid, m.parent, m.time, m.actor, m.authorName, m.reason]
        if (m.mergedBy) base.push([m.mergedBy, m.authors ?? []])
        return base
      }),
      entries: [...this.entries].map(([id, list]) => [id, list.map((e) => [e.commit, e.seq, e.change, e.paths])]),
    }
  }

  static load(s: StoredLog | undefined): RuleLog | null {
    if (!s || typeof s.seq !== 'number' || !Array.isArray(s.commits) || !Array.isArray(s.entries)) return null
    const log = new RuleLog()
    log.seq = s.seq
    for (const [oid, parent, time, actor, authorName, reason, merge] of s.commits)
      log.commits.set(oid, {
        parent,
        time,
        actor,
        authorName,
        reason,
        ...(merge ? { mergedBy: merge[0], authors: merge[1] } : {}),
      })
    for (const [id, list] of s.entries)
      log.entries.set(
        id,
        list.map(([commit, seq, change, paths]) => ({ commit, seq, change, paths })),
      )
    return log
  }
}
