// Rule health (GET /rule-health): per served rule, its newest alert and its alerts of the last 24
// hours (the in-memory alert index, binary searches), its latest rule error (the folded rule-error
// window) and, for correlation and scheduled rules, the last and next run (the schedulers' status).
// Nothing reads stored events or detection output from disk: a page of 1,000 rules is cheap.

import { partitionPoint } from '../sorted-search.js'

/** One rule's health as the API answers it. */
export interface RuleHealth {
  ruleId: string
  /** The rule's kind (`python`, `simple`, `correlation`…). */
  kind: string
  enabled: boolean
  /** createdAt of the rule's newest alert; null: none held. */
  lastAlertAt: string | null
  /** Its alerts created in the 24 hours before the request. */
  alertsLast24h: number
  /** The latest rule error held: its time and the first line of its message (at most 200 characters). */
  lastError: { time: string; message: string } | null
  /** Correlation rules, scheduled rules and scheduled queries: the last run's start and the next one planned; null otherwise. */
  lastRunAt: string | null
  nextRunAt: string | null
}

/** The served rules by id (kind, and the API view: `enabled`, `scheduledQueries`). */
type ServedRules = ReadonlyMap<string, { kind: string; view: Readonly<Record<string, unknown>> }>

/** What the health is read from: detection's alert book and correlation scheduler (detect/index.ts). */
type Activity = { lastCreatedAt: string | null; createdSince: number }

export interface HealthDetection {
  /** A store that keeps the alerts itself (PostgreSQL) answers the alert columns in one read. */
  store?: { alerts?: { ruleActivities?(ruleIds: readonly string[], since: string): Promise<Map<string, Activity>> } }
  book: {
    ruleActivity(ruleId: string, since: string): Activity
    /** The rule errors folded per rule and text (rule-error-window.ts). */
    ruleErrors: { groups: ReadonlyMap<string, { ruleId: string; error: string; lastTime: string }> }
  }
  correlation?: {
    status(): {
      rules: Array<{ ruleId: string; lastRun: { evaluatedAt: string } | null; nextRunAt: string | null }>
    }
  }
}

/** The scheduled queries' status (query-scheduler.ts): a scheduled rule runs when a query it names does. */
export interface HealthSchedules {
  status(): { queries: unknown[] }
}

const DAY_MS = 24 * 60 * 60 * 1000
export const MESSAGE_HEAD = 200

/** The first line of a message, at most MESSAGE_HEAD characters (an ellipsis when cut). */
export function messageHead(message: string): string {
  const line = message.split('\n', 1)[0] ?? ''
  return line.length > MESSAGE_HEAD ? `${line.slice(0, MESSAGE_HEAD - 1)}…` : line
}

interface ScheduledQueryStatus {
  name: string
  lastSlot: string | null
  nextSlotAt: string | null
  lastRun: { startedAt: string } | null
}

const later = (a: string | null, b: string | null) => (a === null ? b : b === null || a >= b ? a : b)
const sooner = (a: string | null, b: string | null) => (a === null ? b : b === null || a <= b ? a : b)

export class RuleHealthReads {
  private sortedIds: { of: unknown; ids: string[] } | null = null

  constructor(
    private readonly served: () => ServedRules,
    private readonly detection: HealthDetection,
    private readonly scheduled?: HealthSchedules,
    private readonly now: () => number = Date.now,
  ) {}

  /** The served rule ids in id order (sorted once per served index). */
  private ids(): string[] {
    const rules = this.served()
    if (this.sortedIds?.of !== rules) this.sortedIds = { of: rules, ids: [...rules.keys()].sort() }
    return this.sortedIds.ids
  }

  /**
   * A page in rule id order: the rules asked (`ruleIds`; ids no served rule has are left out) or all,
   * after the id `after`; `next` is the page's last id when more follow.
   */
  async page(q: { ruleIds?: readonly string[]; after?: string; limit: number }): Promise<{
    results: RuleHealth[]
    next: string | null
  }> {
    const rules = this.served()
    let ids = q.ruleIds ? [...new Set(q.ruleIds)].filter((id) => rules.has(id)).sort() : this.ids()
    if (q.after !== undefined) {
      const after = q.after
      ids = ids.slice(partitionPoint(ids.length, (i) => ids[i]! <= after))
    }
    const chosen = ids.slice(0, q.limit)
    const results = await this.health(chosen)
    return { results, next: ids.length > q.limit ? chosen[chosen.length - 1]! : null }
  }

  private async health(ids: readonly string[]): Promise<RuleHealth[]> {
    const { book } = this.detection
    const rules = this.served()
    const since = new Date(this.now() - DAY_MS).toISOString()
    const wanted = new Set(ids)
    // The latest error of each rule asked: one pass over the folded entries (bounded by the window).
    const errors = new Map<string, { time: string; message: string }>()
    for (const g of book.ruleErrors.groups.values()) {
      if (!wanted.has(g.ruleId)) continue
      const seen = errors.get(g.ruleId)
      if (!seen || g.lastTime > seen.time) errors.set(g.ruleId, { time: g.lastTime, message: g.error })
    }
    const runs = this.runs(ids, rules)
    const stored = await this.detection.store?.alerts?.ruleActivities?.(ids, since)
    return ids.map((ruleId) => {
      const rule = rules.get(ruleId)!
      const activity = stored
        ? (stored.get(ruleId) ?? { lastCreatedAt: null, createdSince: 0 })
        : book.ruleActivity(ruleId, since)
      const error = errors.get(ruleId)
      const run = runs.get(ruleId)
      return {
        ruleId,
        kind: rule.kind,
        enabled: rule.view.enabled !== false,
        lastAlertAt: activity.lastCreatedAt,
        alertsLast24h: activity.createdSince,
        lastError: error ? { time: error.time, message: messageHead(error.message) } : null,
        lastRunAt: run?.last ?? null,
        nextRunAt: run?.next ?? null,
      }
    })
  }

  /**
   * Last and next runs of the scheduled ones among `ids`, told by their schedulers, not by their kind:
   * a correlation rule the correlation scheduler has, a scheduled query the query scheduler has (by
   * name), a rule naming scheduled queries (`scheduledQueries`: it runs when one of them does).
   */
  private runs(ids: readonly string[], rules: ServedRules): Map<string, { last: string | null; next: string | null }> {
    const out = new Map<string, { last: string | null; next: string | null }>()
    const wanted = new Set(ids)
    for (const s of this.detection.correlation?.status().rules ?? [])
      if (wanted.has(s.ruleId)) out.set(s.ruleId, { last: s.lastRun?.evaluatedAt ?? null, next: s.nextRunAt })
    const queries = new Map<string, ScheduledQueryStatus>()
    for (const q of (this.scheduled?.status().queries ?? []) as ScheduledQueryStatus[]) queries.set(q.name, q)
    if (queries.size === 0) return out
    for (const id of ids) {
      const named = rules.get(id)!.view.scheduledQueries
      const names = queries.has(id) ? [id] : Array.isArray(named) ? (named as unknown[]) : null
      if (names === null) continue
      let last: string | null = null
      let next: string | null = null
      for (const name of names) {
        const q = typeof name === 'string' ? queries.get(name) : undefined
        if (!q) continue
        last = later(last, q.lastRun?.startedAt ?? q.lastSlot)
        next = sooner(next, q.nextSlotAt)
      }
      out.set(id, { last, next })
    }
    return out
  }
}
