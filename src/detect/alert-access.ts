// The alerts as the alert routes read and change them (alert-reads.ts): a page, one alert, its
// events and context, triage changes. The alert book answers from memory (the file store); a store
// that keeps the alerts itself (PostgreSQL: state/pg-alerts.ts) answers from its database, so every
// replica reads and changes the same alert.
import type { AlertQuery } from './alert-index.js'
import type { TriageChange } from './alert-triage.js'
import type { AlertStatus, Group } from './grouping.js'
import type { Location } from './stored-log.js'

export type AlertPage = { results: Group[]; next: { createdAt: string; id: string } | null }

export interface AlertAccess {
  query(q: AlertQuery): AlertPage | Promise<AlertPage>
  /** The group `id` when it is an alert. */
  alert(id: string): Group | undefined | Promise<Group | undefined>
  /** The stored records of the alert's committed matches, sorted by data file then offset. */
  eventLocations(g: Group): Promise<Location[]>
  /** The alert's context: in memory until its commit is durable, then read from the ledger. */
  context(g: Group): Promise<Record<string, unknown>>
  /** The status is the only writable field; resolves once durable (undefined: no such alert). */
  setStatus(id: string, status: AlertStatus): Promise<Group | undefined>
  /** Triage changes (alert-triage.ts), one commit for all; each resolves once durable (undefined: no such alert). */
  change(ids: readonly string[], change: TriageChange): Promise<Array<Group | undefined>>
  /**
   * Per rule asked, its newest alert's creation time and how many alerts it made since `since`, in
   * one read (a store that keeps the alerts itself; the book answers per rule from its index).
   */
  ruleActivities?(ruleIds: readonly string[], since: string): Promise<Map<string, RuleActivity>>
}

export interface RuleActivity {
  lastCreatedAt: string | null
  createdSince: number
}
