// A bounded memory of recent webhook deliveries, so a replayed signed delivery runs nothing: at
// most `max` keys (the oldest forgotten first), each for `ttlMs`. Insertion order is time order,
// so expiry and eviction both pop from the front of one Map; every operation is O(1) amortized.
// In memory only: a restart forgets (a replay then costs at most one idempotent reconcile run).

export class RecentDeliveries {
  private readonly seen = new Map<string, number>()

  constructor(
    private readonly max = 10_000,
    private readonly ttlMs = 24 * 3600_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records `keys` as one delivery; false (and records nothing) when any of them was seen. */
  remember(keys: string[]): boolean {
    const now = this.now()
    for (const [k, at] of this.seen) {
      if (now - at < this.ttlMs) break
      this.seen.delete(k)
    }
    if (keys.some((k) => this.seen.has(k))) return false
    for (const k of keys) this.seen.set(k, now)
    while (this.seen.size > this.max) this.seen.delete(this.seen.keys().next().value!)
    return true
  }

  get size(): number {
    return this.seen.size
  }
}
