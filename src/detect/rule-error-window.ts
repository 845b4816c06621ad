// The rule errors detection keeps in memory, bounded (issue 27 finding 7): the newest errors one by
// one (at most `maxErrors`; older ones stay on disk, not in memory), and every error folded into one
// entry per rule and error text as it arrives (count, first and last time, the latest revision and
// record; at most `maxGroups` entries: past that, the entries seen least recently are dropped).
// Positions count every error since start and never change, so a page cursor stays valid.
import type { RuleErrorRecord } from './detection-ledger.js'

/** One rule's errors with one text, folded. */
export interface FoldedRuleErrors {
  ruleId: string
  error: string
  count: number
  firstTime: string
  lastTime: string
  revision: string | null
  record: { partition: string; offset: number } | null
}

export const DEFAULT_MAX_ERRORS = 10_000
export const DEFAULT_MAX_GROUPS = 10_000

export const groupKey = (e: { ruleId: string; error: string }) => `${e.ruleId}\u0000${e.error}`

/** Folds one error into `into` (a new entry, or the one of its rule and text). */
export function foldError(into: Map<string, FoldedRuleErrors>, e: RuleErrorRecord): void {
  const key = groupKey(e)
  const g = into.get(key)
  if (!g) {
    into.set(key, {
      ruleId: e.ruleId,
      error: e.error,
      count: 1,
      firstTime: e.time,
      lastTime: e.time,
      revision: e.revision,
      record: e.record,
    })
    return
  }
  g.count++
  if (e.time < g.firstTime) g.firstTime = e.time
  if (e.time >= g.lastTime) {
    g.lastTime = e.time
    g.revision = e.revision
  }
  if (e.record) g.record = e.record
}

export class RuleErrorWindow {
  private held: RuleErrorRecord[] = []
  /** Errors dropped from the front of `held`: the position of `held[0]`. */
  private dropped = 0
  readonly groups = new Map<string, FoldedRuleErrors>()

  constructor(
    initial: readonly RuleErrorRecord[] = [],
    readonly maxErrors = DEFAULT_MAX_ERRORS,
    readonly maxGroups = DEFAULT_MAX_GROUPS,
  ) {
    for (const e of initial) this.push(e)
  }

  /** How many errors were pushed (the position the next one gets). */
  get length(): number {
    return this.dropped + this.held.length
  }

  /** The position of the oldest error still held. */
  get first(): number {
    return this.dropped
  }

  /** The error at a position, when it is still held. */
  at(position: number): RuleErrorRecord | undefined {
    return this.held[position - this.dropped]
  }

  /** The errors held, oldest first. */
  map<T>(f: (e: RuleErrorRecord) => T): T[] {
    return this.held.map(f)
  }

  push(e: RuleErrorRecord): void {
    this.held.push(e)
    foldError(this.groups, e)
    // Dropped in slices (a tenth of the bound at a time): no shift per error.
    if (this.held.length > this.maxErrors + Math.ceil(this.maxErrors / 10)) {
      const cut = this.held.length - this.maxErrors
      this.held = this.held.slice(cut)
      this.dropped += cut
    }
    if (this.groups.size > this.maxGroups + Math.ceil(this.maxGroups / 10)) this.dropOldGroups()
  }

  /** Keeps the `maxGroups` entries seen most recently. */
  private dropOldGroups(): void {
    const byLast = [...this.groups.entries()].sort(([, a], [, b]) => (a.lastTime < b.lastTime ? -1 : 1))
    for (const [k] of byLast.slice(0, this.groups.size - this.maxGroups)) this.groups.delete(k)
  }
}
