// The alerts in memory, ordered for `GET /alerts`: newest createdAt first, ties by id. Sorted arrays
// (ascending createdAt, descending id, walked from their end): all alerts, and per (rule, status)
// and per (severity, status). A filtered page merges only the lists its filters select (the smaller
// candidate set), so a selective filter costs its page, not a walk of every alert (docs/decisions.md).
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

type Key = { createdAt: string; id: string }
const keyOf = (g: Group) => g as unknown as Key

/** true when a sorts before b in the arrays (older, or same time and greater id). */
function before(a: Key, b: Key): boolean {
  return a.createdAt !== b.createdAt ? a.createdAt < b.createdAt : a.id > b.id
}

/** The first position whose element does not sort before `key`. */
function bound(list: readonly Group[], key: Key): number {
  let lo = 0
  let hi = list.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (before(keyOf(list[mid]!), key)) lo = mid + 1
    else hi = mid
  }
  return lo
}

function insert(list: Group[], g: Group): void {
  // New alerts carry the newest createdAt, so this is nearly always an append.
  const n = list.length
  const i = n > 0 && before(keyOf(g), keyOf(list[n - 1]!)) ? bound(list, keyOf(g)) : n
  list.splice(i, 0, g)
}

function remove(list: Group[], g: Group): void {
  const i = bound(list, keyOf(g))
  if (list[i] === g) list.splice(i, 1)
}

const STATUS_LIST = ['OPEN', 'TRIAGED', 'CLOSED', 'RESOLVED']
const SEVERITY_LIST = ['INFO', 'LOW', 'MEDIUM', 'HIGH', 'CRITICAL']

export class AlertIndex {
  private readonly all: Group[] = []
  private readonly byRuleStatus = new Map<string, Group[]>()
  private readonly bySeverityStatus = new Map<string, Group[]>()
  /** Severities seen besides the five (a rule's own value is kept as it is). */
  private readonly severities = new Set<string>(SEVERITY_LIST)

  private lists(g: Group, status: string): Group[][] {
    const out: Group[][] = []
    for (const [map, key] of [
      [this.byRuleStatus, `${g.ruleId}\u0000${status}`],
      [this.bySeverityStatus, `${g.severity}\u0000${status}`],
    ] as const) {
      let list = map.get(key)
      if (!list) map.set(key, (list = []))
      out.push(list)
    }
    return out
  }

  add(g: Group): void {
    this.severities.add(g.severity)
    insert(this.all, g)
    for (const list of this.lists(g, g.status)) insert(list, g)
  }

  /** Takes an alert out (a rolled-back one: group-undo.ts). */
  remove(g: Group): void {
    remove(this.all, g)
    for (const list of this.lists(g, g.status)) remove(list, g)
  }

  /** Moves an alert between the status lists; call before its `status` changes. */
  setStatus(g: Group, status: string): void {
    if (g.status === status) return
    for (const list of this.lists(g, g.status)) remove(list, g)
    for (const list of this.lists(g, status)) insert(list, g)
  }

  get size(): number {
    return this.all.length
  }

  /** A rule's newest alert's createdAt and how many of its alerts were created at or after `since` (binary searches). */
  ruleActivity(ruleId: string, since: string): { lastCreatedAt: string | null; createdSince: number } {
    let lastCreatedAt: string | null = null
    let createdSince = 0
    for (const status of STATUS_LIST) {
      const list = this.byRuleStatus.get(`${ruleId}\u0000${status}`)
      if (!list?.length) continue
      const newest = keyOf(list[list.length - 1]!).createdAt
      if (lastCreatedAt === null || newest > lastCreatedAt) lastCreatedAt = newest
      createdSince += list.length - bound(list, { createdAt: since, id: '\uffff' })
    }
    return { lastCreatedAt, createdSince }
  }

  /** The lists that hold every alert the filters can select (plus a residual check per alert). */
  private candidates(q: AlertQuery): Group[][] {
    const statuses = q.statuses?.length ? q.statuses : null
    const rules = q.ruleIds?.length ? q.ruleIds : null
    const sevs = q.severities?.length ? q.severities : null
    if (!rules && !sevs && !statuses) return [this.all]
    const pick = (map: Map<string, Group[]>, firsts: readonly string[]) => {
      const out: Group[][] = []
      for (const a of new Set(firsts))
        for (const s of new Set(statuses ?? STATUS_LIST)) {
          const list = map.get(`${a}\u0000${s}`)
          if (list?.length) out.push(list)
        }
      return out
    }
    const total = (ls: Group[][]) => ls.reduce((n, l) => n + l.length, 0)
    const byRule = rules ? pick(this.byRuleStatus, rules) : null
    const bySev = pick(this.bySeverityStatus, sevs ?? [...this.severities])
    return byRule && total(byRule) <= total(bySev) ? byRule : bySev
  }

  query(q: AlertQuery): { results: Group[]; next: Key | null } {
    // Each list is walked from below the cursor (or created-before, exclusive) towards older alerts.
    const upper = (list: Group[]) => {
      let end = list.length
      if (q.after) end = Math.min(end, bound(list, q.after))
      if (q.createdBefore) end = Math.min(end, bound(list, { createdAt: q.createdBefore, id: '\uffff' }))
      return end
    }
    const heads = this.candidates(q)
      .map((list) => ({ list, i: upper(list) - 1 }))
      .filter((h) => h.i >= 0)
    const rules = q.ruleIds?.length ? new Set(q.ruleIds) : null
    const sev = q.severities?.length ? new Set(q.severities) : null
    const st = q.statuses?.length ? new Set(q.statuses) : null
    const results: Group[] = []
    while (heads.length > 0) {
      // The newest head of the lists (they are few: the rules or severities asked × statuses).
      let best = 0
      for (let h = 1; h < heads.length; h++)
        if (before(keyOf(heads[best]!.list[heads[best]!.i]!), keyOf(heads[h]!.list[heads[h]!.i]!))) best = h
      const head = heads[best]!
      const g = head.list[head.i]!
      if (--head.i < 0) heads.splice(best, 1)
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
