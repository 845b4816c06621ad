// Detection's alerts as the API reads and changes them (api/alert-routes.ts `AlertSource`): pages of
// the alert index, one alert's view, its matched records as stored (the ledger's event locations,
// then stored-log.ts's readStoredLines) and a status change, all through the alert book's narrow
// `AlertAccess` (alert-book.ts): the book stays the one writer of detection output.
import type { AlertAccess } from './alert-book.js'
import type { AlertStatus } from './alert-status.js'
import type { AlertQuery } from './alert-index.js'
import { alertView } from './grouping.js'
import { readStoredLines } from './stored-log.js'

export class AlertReads {
  constructor(
    private readonly alerts: AlertAccess,
    private readonly logsRoot: string,
  ) {}

  /** A page of alerts, newest first; `next` is the position the next page starts after. */
  query(q: AlertQuery): { results: unknown[]; next: { createdAt: string; id: string } | null } {
    const page = this.alerts.query(q)
    return { results: page.results.map(alertView), next: page.next }
  }

  has(id: string): boolean {
    return this.alerts.alert(id) !== undefined
  }

  /** The alert's view; null when no alert has this id. */
  get(id: string): Record<string, unknown> | null {
    const g = this.alerts.alert(id)
    return g ? alertView(g) : null
  }

  /** The alert's matched records `[skip, skip + limit)` and how many there are; null when no alert. */
  async events(id: string, skip: number, limit: number): Promise<{ results: unknown[]; total: number } | null> {
    const g = this.alerts.alert(id)
    if (!g) return null
    const locations = await this.alerts.eventLocations(g)
    const results = await readStoredLines(this.logsRoot, locations.slice(skip, skip + limit))
    return { results, total: locations.length }
  }

  /** Sets the alert's status (journaled); null when no alert has this id. */
  async setStatus(id: string, status: AlertStatus): Promise<Record<string, unknown> | null> {
    const g = await this.alerts.setStatus(id, status)
    return g ? alertView(g) : null
  }
}
