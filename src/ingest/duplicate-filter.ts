// The duplicate filter: metadata.id values stored within the window (24 h by default, by arrival
// time). It lives in memory and is rebuilt at start from the stored files themselves, so it can never
// disagree with what is on disk: an id counts as stored exactly when its line is in a data file.
export type DuplicateCheck = { kind: 'new' } | { kind: 'stored' } | { kind: 'pending'; commit: Promise<void> }

interface Seen {
  at: number
  /** Set while the line holding the id is queued but not yet durable. */
  commit?: Promise<void>
}

export class DuplicateFilter {
  // A Map iterates in insertion order, which is arrival order: pruning only looks at the front.
  private readonly seen = new Map<string, Seen>()

  constructor(readonly windowMs: number) {}

  get size(): number {
    return this.seen.size
  }

  check(id: string, now: number): DuplicateCheck {
    const s = this.seen.get(id)
    if (s === undefined || s.at < now - this.windowMs) return { kind: 'new' }
    return s.commit ? { kind: 'pending', commit: s.commit } : { kind: 'stored' }
  }

  /** Marks ids as queued; they count as duplicates for later requests, which wait for the commit. */
  markPending(ids: string[], now: number, commit: Promise<void>): void {
    const entry: Seen = { at: now, commit }
    for (const id of ids) {
      this.seen.delete(id)
      this.seen.set(id, entry)
    }
    commit.then(
      () => void delete entry.commit,
      () => {
        // A failed commit stored nothing we can vouch for; the store refuses writes from now on.
        for (const id of ids) if (this.seen.get(id) === entry) this.seen.delete(id)
      },
    )
  }

  /** Adds ids found on disk at start; call in arrival order. */
  addStored(id: string, at: number): void {
    this.seen.delete(id)
    this.seen.set(id, { at })
  }

  prune(now: number): void {
    const cutoff = now - this.windowMs
    for (const [id, s] of this.seen) {
      if (s.at >= cutoff) break
      if (!s.commit) this.seen.delete(id)
    }
  }
}
