// Detection's alerts as the API reads and changes them (api/alert-routes.ts `AlertSource`): pages of
// the alert index, one alert's view, its matched records as stored (alert-events.ts, then
// stored-log.ts's readStoredLines) and a status change through the detector.
import type { AlertStatus } from './alert-status.js'
import { AlertEventIndex } from './alert-events.js'
import type { AlertQuery } from './alert-index.js'
import type { DetectionStore } from './detection-store.js'
import type { Detector } from './detector.js'
import { alertView } from './grouping.js'
import { readStoredLines } from './stored-log.js'

export class AlertReads {
  private readonly eventIndex: AlertEventIndex

  constructor(
    private readonly detector: Detector,
    store: DetectionStore,
    private readonly logsRoot: string,
  ) {
    this.eventIndex = new AlertEventIndex(store)
  }

  /** A page of alerts, newest first; `next` is the position the next page starts after. */
  query(q: AlertQuery): { results: unknown[]; next: { createdAt: string; id: string } | null } {
    const page = this.detector.alerts.query(q)
    return { results: page.results.map(alertView), next: page.next }
  }

  has(id: string): boolean {
    return this.detector.grouper.groups.get(id)?.alert === true
  }

  /** The alert's view; null when no alert has this id. */
  get(id: string): Record<string, unknown> | null {
    const g = this.detector.grouper.groups.get(id)
    return g?.alert ? alertView(g) : null
  }

  /** The alert's matched records `[skip, skip + limit)` and how many there are; null when no alert. */
  async events(id: string, skip: number, limit: number): Promise<{ results: unknown[]; total: number } | null> {
    const g = this.detector.grouper.groups.get(id)
    if (!g?.alert) return null
    // The matches of the group lie in the event-hour partitions of its first to last event.
    const locations = await this.eventIndex.locations(g)
    const results = await readStoredLines(this.logsRoot, locations.slice(skip, skip + limit))
    return { results, total: locations.length }
  }

  /** Sets the alert's status (journaled); null when no alert has this id. */
  async setStatus(id: string, status: AlertStatus): Promise<Record<string, unknown> | null> {
    const g = await this.detector.setStatus(id, status)
    return g ? alertView(g) : null
  }
}
