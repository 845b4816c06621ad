// What detection tells the outside about alerts (destinations use it; detection imports nothing
// of theirs): `restored` once with the groups read back at start (and how to read an alert's
// context, which is kept on disk: alert-book.ts), `created` synchronously when a
// group becomes an alert (before its commit, so what it sets on the group, such as the routed
// `destinations`, is committed with the alert; inside the commit over a store that decides groups:
// PostgreSQL), `committed` once that commit is durable.
import type { Group, MatchFields, RuleMeta } from './grouping.js'

export interface AlertHook {
  restored?(groups: ReadonlyMap<string, Group>, context: (g: Group) => Promise<Record<string, unknown>>): void
  /** `match`: the evaluation that made the group an alert (`destinations` is a Python rule's destinations()). */
  created(group: Group, rule: RuleMeta, match: MatchFields & { destinations?: unknown }): void
  committed(groups: readonly Group[]): void
}
