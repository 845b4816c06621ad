// The alert limit, as Panther has: once a rule made `perHour` alerts in a clock hour (processing
// time, UTC), its further matches in that hour become signals only (stored, no alert, no delivery)
// until the hour ends. Counts are per rule for the current hour; a start counts again the alerts
// its rules already made this hour (from the groups read back). Reported in /status and a metric.
import type { Group } from './grouping.js'

export const DEFAULT_ALERTS_PER_RULE_HOUR = 1000

const HOUR_MS = 3_600_000

interface RuleHour {
  alerts: number
  /** Matches turned into signals by the limit. */
  limited: number
}

/** A rule over its limit in the current hour, as /status shows it. */
export interface LimitedRule {
  ruleId: string
  alerts: number
  limitedMatches: number
}

export class AlertLimiter {
  private hour = -1
  private rules = new Map<string, RuleHour>()

  constructor(
    readonly perHour: number = DEFAULT_ALERTS_PER_RULE_HOUR,
    restored: Iterable<Group> = [],
    now = Date.now(),
  ) {
    this.turn(now)
    for (const g of restored) this.learned(g, now)
  }

  /** An alert made before this start or by another replica, learned now: counted if made this hour. */
  learned(g: Group, now = Date.now()): void {
    this.turn(now)
    if (!g.alert || g.createdAt === null) return
    if (Math.floor(Date.parse(g.createdAt) / HOUR_MS) === this.hour) this.of(g.ruleId).alerts++
  }

  private turn(now: number): void {
    const hour = Math.floor(now / HOUR_MS)
    if (hour !== this.hour) {
      this.hour = hour
      this.rules = new Map()
    }
  }

  private of(ruleId: string): RuleHour {
    let r = this.rules.get(ruleId)
    if (!r) this.rules.set(ruleId, (r = { alerts: 0, limited: 0 }))
    return r
  }

  /** Whether a match of the rule may still group into alerts now; false counts it as limited. */
  admit(ruleId: string, now: number): boolean {
    this.turn(now)
    const r = this.rules.get(ruleId)
    if (!r || r.alerts < this.perHour) return true
    r.limited++
    return false
  }

  /** An alert the rule made now. */
  created(ruleId: string, now: number): void {
    this.turn(now)
    this.of(ruleId).alerts++
  }

  /** The rules at their limit in the current hour. */
  limited(now = Date.now()): { perHour: number; hourStart: string; rules: LimitedRule[] } {
    this.turn(now)
    const rules = [...this.rules]
      .filter(([, r]) => r.alerts >= this.perHour)
      .map(([ruleId, r]) => ({ ruleId, alerts: r.alerts, limitedMatches: r.limited }))
      .sort((a, b) => (a.ruleId < b.ruleId ? -1 : 1))
    return { perHour: this.perHour, hourStart: new Date(this.hour * HOUR_MS).toISOString(), rules }
  }
}
