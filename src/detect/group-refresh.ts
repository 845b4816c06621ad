// A scheduled rule's groups read again from a store replicas share (DetectionLedger.ruleGroups),
// before its run changes them (correlation-schedule.ts, query-scheduler.ts). Correlation and
// scheduled-query groups are decided in the alert book's memory and written whole; the replica that
// holds the schedules lease now may not be the one that wrote them last, and its copies would be
// older than the database's (fewer events, no alert yet, triage reset). The groups committed since
// replace them (an alert new to this book counts against its rule's limit this hour); a group with a
// change in this book not yet committed is kept as it is.
import type { AlertIndex } from './alert-index.js'
import type { AlertLimiter } from './alert-limiter.js'
import type { DetectionLedger } from './detection-ledger.js'
import type { Grouper } from './grouping.js'

export async function refreshGroups(
  ledger: Pick<DetectionLedger, 'ruleGroups'>,
  grouper: Pick<Grouper, 'groups' | 'restore'>,
  index: Pick<AlertIndex, 'add' | 'remove'>,
  limiter: Pick<AlertLimiter, 'learned'>,
  /** The book's uncommitted changes (and undo logs of commits not yet durable), by group id. */
  pending: ReadonlyArray<ReadonlyMap<string, unknown>>,
  ruleIds: readonly string[],
  sinceMs: number,
): Promise<void> {
  if (!ledger.ruleGroups || ruleIds.length === 0) return
  const kept = (id: string) => !pending.some((m) => m.has(id))
  for (const g of await ledger.ruleGroups(ruleIds, sinceMs, kept)) {
    const known = grouper.groups.get(g.id)
    if (known?.alert) index.remove(known)
    // An alert the last holder made: counted against the rule's limit this hour here too.
    else limiter.learned(g)
    grouper.restore(g)
    if (g.alert) index.add(g)
  }
}
