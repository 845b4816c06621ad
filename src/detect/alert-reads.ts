// Detection's alerts as the API reads and changes them (api/alert-routes.ts `AlertSource`): pages of
// the alert index, one alert's view (its alert context read back from disk: alert-book.ts), its matched records as stored (the ledger's event locations,
// then stored-log.ts's readStoredLines) and triage changes (status, assignee, comments:
// alert-triage.ts), all through the narrow `AlertAccess` (alert-access.ts): the alert book's
// (in memory, the one writer of detection output) or the PostgreSQL store's (state/pg-alerts.ts).
import type { AlertAccess } from './alert-access.js'
import type { AlertQuery } from './alert-index.js'
import { MAX_COMMENTS, type TriageChange, triageView } from './alert-triage.js'
import { alertView, type Group } from './grouping.js'
import { readStoredLines } from './stored-log.js'

export class AlertReads {
  constructor(
    private readonly alerts: AlertAccess,
    private readonly logsRoot: string,
  ) {}

  /** A page of alerts, newest first; `next` is the position the next page starts after. */
  async query(q: AlertQuery): Promise<{ results: unknown[]; next: { createdAt: string; id: string } | null }> {
    const page = await this.alerts.query(q)
    // The page's contexts are read from disk, 16 at a time.
    const results: unknown[] = []
    for (let i = 0; i < page.results.length; i += 16)
      results.push(...(await Promise.all(page.results.slice(i, i + 16).map((g) => this.view(g)))))
    return { results, next: page.next }
  }

  /** A list's alert: the alert shape and its assignee. */
  private async view(g: Group): Promise<Record<string, unknown>> {
    return { ...alertView(g, await this.alerts.context(g)), assignee: g.assignee ?? null }
  }

  /** One alert: the alert shape, its assignee, comments (the newest MAX_COMMENTS) and history. */
  private async detail(g: Group): Promise<Record<string, unknown>> {
    const triage = triageView(g)
    return {
      ...alertView(g, await this.alerts.context(g)),
      ...triage,
      comments: triage.comments.slice(-MAX_COMMENTS),
    }
  }

  async has(id: string): Promise<boolean> {
    return (await this.alerts.alert(id)) !== undefined
  }

  /** The alert's view; null when no alert has this id. */
  async get(id: string): Promise<Record<string, unknown> | null> {
    const g = await this.alerts.alert(id)
    return g ? this.detail(g) : null
  }

  /** The alert's matched records `[skip, skip + limit)` and how many there are; null when no alert. */
  async events(id: string, skip: number, limit: number): Promise<{ results: unknown[]; total: number } | null> {
    const g = await this.alerts.alert(id)
    if (!g) return null
    const locations = await this.alerts.eventLocations(g)
    const results = await readStoredLines(this.logsRoot, locations.slice(skip, skip + limit))
    return { results, total: locations.length }
  }

  /** A triage change of one alert (journaled); its view after, or null when no alert has this id. */
  async change(id: string, change: TriageChange): Promise<Record<string, unknown> | null> {
    const [g] = await this.alerts.change([id], change)
    return g ? this.detail(g) : null
  }

  /** The same change of several alerts in one commit; per id whether it was an alert. */
  async changeMany(ids: readonly string[], change: TriageChange): Promise<boolean[]> {
    return (await this.alerts.change(ids, change)).map((g) => g !== undefined)
  }
}
