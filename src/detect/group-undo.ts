// The undo log of alert groups: what each group was before the changes made since the last commit
// was staged (a copy; null for a group opened since). A commit takes its log along; when a run
// fails, the alert book rolls the groups back through the logs of everything that never became
// durable, newest first, so nothing lists an alert, a count or a status that the next start (which
// evaluates again from the checkpoint) would not have. One copy per group per commit: the same
// order of work as the journal line each changed group gets anyway.
import type { Group } from './grouping.js'

/** Group id → its state before the logged changes (null: opened since). */
export type UndoLog = Map<string, Group | null>

/** A copy deep enough that later changes to the group (counts, summaries, deliveries) leave it alone. */
export function copyGroup(g: Group): Group {
  const summaryCounts: Group['summaryCounts'] = {}
  for (const [attr, counts] of Object.entries(g.summaryCounts)) summaryCounts[attr] = { ...counts }
  return { ...g, destinations: g.destinations.map((d) => ({ ...d })), summaryCounts }
}

/** Puts `before` back into the live object (same identity: every index keeps pointing at it). */
export function restoreGroup(live: Group, before: Group): void {
  for (const k of Object.keys(live)) if (!(k in before)) delete (live as unknown as Record<string, unknown>)[k]
  Object.assign(live, before)
}
