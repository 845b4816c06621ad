// The undo log of alert groups (grouping.ts): what each group was before the changes made since the
// last commit was staged (a copy; null for a group opened since). A commit takes its log along; when
// a run fails, the alert book rolls the groups back through the logs of everything that never became
// durable, newest first, so nothing lists an alert, a count or a status that the next start (which
// evaluates again from the checkpoint) would not have. One copy per group per commit: the same order
// of work as the journal line each changed group gets anyway. Generic over the group's type, so this
// module needs nothing of grouping.ts (which uses it).

/** The parts of a group that a shallow copy would share with it. */
interface Nested {
  summaryCounts: Record<string, Record<string, number>>
  destinations: object[]
}

/** Group id → its state before the logged changes (null: opened since). */
export type UndoLog<G> = Map<string, G | null>

/**
 * A copy deep enough that later changes to the group's counts and summaries leave it alone. The
 * deliveries are shared, not copied: the dispatcher updates those entries in place and keeps its own
 * journal, so a roll-back never puts back a stale delivery state.
 */
export function copyGroup<G extends Nested>(g: G): G {
  const summaryCounts: Nested['summaryCounts'] = {}
  for (const [attr, counts] of Object.entries(g.summaryCounts)) summaryCounts[attr] = { ...counts }
  return { ...g, summaryCounts }
}

/** Puts `before` back into the live object (same identity: every index keeps pointing at it). */
export function restoreGroup<G extends object>(live: G, before: G): void {
  for (const k of Object.keys(live)) if (!(k in before)) delete (live as Record<string, unknown>)[k]
  Object.assign(live, before)
}
