// The alerts in memory, ordered for `GET /alerts`: newest createdAt first, ties by id. One sorted
// array (ascending createdAt, descending id, walked from its end); new alerts arrive with the
// newest createdAt, so an insert is nearly always an append. A filtered page walks from the cursor
// until it has `limit` alerts (≈ 100k alerts in a few ms at worst, see docs/decisions.md).
import type { Group } from './grouping.js'

export interface AlertQuery {
  ruleIds?: string[]
  severities?: string[]
  statuses?: string[]
  createdAfter?: string
  createdBefore?: string
  /** The last alert of the previous page. */
  after?: { createdAt: string; id: string }
  limit: number
}

/** true when a sorts before b in the array (older, or same time and greater id). */
function before(a: { createdAt: string; id: string }, b: { createdAt: string; id: string }): boolean {
  return a.createdAt !== b.createdAt ? a.createdAt < b.createdAt : a.id > b.id
}

export class AlertIndex {
  private readonly list: Group[] = []

  add(g: Group): void {
    const list = this.list
    let i = list.length
    if (i > 0 && before(g as { createdAt: string; id: string }, list[i - 1] as { createdAt: string; id: string })) {
      let lo = 0
      let hi = list.length
      while (lo < hi) {
        const mid = (lo + hi) >> 1
        if (before(list[mid] as { createdAt: string; id: string }, g as { createdAt: string; id: string })) lo = mid + 1
        else hi = mid
      }
      i = lo
    }
    list.splice(i, 0, g)
  }

  get size(): number {
    return this.list.length
  }

  query(q: AlertQuery): { results: Group[]; next: { createdAt: string; id: string } | null } {
    const list = this.list
    // Start below the cursor (or the created-before bound), walk towards older alerts.
    let end = list.length
    const bound = (key: { createdAt: string; id: string }) => {
      let lo = 0
      let hi = list.length
      while (lo < hi) {
        const mid = (lo + hi) >> 1
        if (before(list[mid] as { createdAt: string; id: string }, key)) lo = mid + 1
        else hi = mid
      }
      return lo
    }
    if (q.after) end = Math.min(end, bound(q.after))
    // created-before is exclusive: everything at that instant or later is left out.
    if (q.createdBefore) end = Math.min(end, bound({ createdAt: q.createdBefore, id: '\uffff' }))
    const rules = q.ruleIds?.length ? new Set(q.ruleIds) : null
    const sev = q.severities?.length ? new Set(q.severities) : null
    const st = q.statuses?.length ? new Set(q.statuses) : null
    const results: Group[] = []
    for (let i = end - 1; i >= 0; i--) {
      const g = list[i]!
      if (q.createdAfter && (g.createdAt as string) < q.createdAfter) break
      if (rules && !rules.has(g.ruleId)) continue
      if (sev && !sev.has(g.severity)) continue
      if (st && !st.has(g.status)) continue
      if (results.length === q.limit) {
        const last = results[results.length - 1]!
        return { results, next: { createdAt: last.createdAt as string, id: last.id } }
      }
      results.push(g)
    }
    return { results, next: null }
  }
}
