// The rule errors as the API lists them (api/rule-error-routes.ts), over the bounded window of rule
// errors the alert book keeps (rule-error-window.ts): newest first one by one (the errors still held
// in memory), or folded into one entry per rule and error text with its count (as Panther shows
// detection errors), and the stored record a rule error still held names.
import type { RuleErrorRecord } from './detection-ledger.js'
import { type FoldedRuleErrors, foldError, type RuleErrorWindow } from './rule-error-window.js'
import { readStoredLines } from './stored-log.js'

export interface RuleErrorFilter {
  ruleIds?: readonly string[]
  /** Only errors at or after this time (ISO, UTC). */
  since?: string
  limit: number
}

/** One rule's errors with the same text: how many, when, and the latest one's revision and record. */
export interface RuleErrorGroup extends FoldedRuleErrors {
  /** The served rule's kind; null when no served rule has this id (any more). */
  ruleKind: string | null
}

export class RuleErrorList {
  constructor(
    private readonly errors: RuleErrorWindow,
    private readonly logsRoot: string,
    private readonly kindOf: (ruleId: string) => string | null,
  ) {}

  /** Newest first; `before`: the position the previous page ended at (positions never change). */
  list(f: RuleErrorFilter & { before?: number }): { results: RuleErrorRecord[]; next: number | null } {
    const wanted = f.ruleIds ? new Set(f.ruleIds) : null
    const keep = (e: RuleErrorRecord) => (!wanted || wanted.has(e.ruleId)) && (!f.since || e.time >= f.since)
    const w = this.errors
    const results: RuleErrorRecord[] = []
    let i = Math.min(f.before ?? w.length, w.length) - 1
    for (; i >= w.first && results.length < f.limit; i--) if (keep(w.at(i)!)) results.push(w.at(i)!)
    let more = false
    for (let j = i; j >= w.first && !more; j--) more = keep(w.at(j)!)
    return { results, next: more ? i + 1 : null }
  }

  /** One entry per rule and error text, the latest first (ties by rule id, then text); `after`: the previous page's last. */
  groups(f: RuleErrorFilter & { after?: { lastTime: string; key: string } }): {
    results: RuleErrorGroup[]
    next: { lastTime: string; key: string } | null
  } {
    let source: ReadonlyMap<string, FoldedRuleErrors> = this.errors.groups
    if (f.since) {
      // Counts since a time: the errors held from then on, folded (a scan of the bounded window).
      const since = new Map<string, FoldedRuleErrors>()
      const w = this.errors
      for (let i = w.first; i < w.length; i++) {
        const e = w.at(i)!
        if (e.time >= f.since) foldError(since, e)
      }
      source = since
    }
    const wanted = f.ruleIds ? new Set(f.ruleIds) : null
    const sorted = [...source.entries()]
      .filter(([, g]) => !wanted || wanted.has(g.ruleId))
      .sort(([ka, a], [kb, b]) => (a.lastTime !== b.lastTime ? (a.lastTime < b.lastTime ? 1 : -1) : ka < kb ? -1 : 1))
    const after = f.after
    const start = after
      ? sorted.findIndex(([k, g]) => g.lastTime < after.lastTime || (g.lastTime === after.lastTime && k > after.key))
      : 0
    const from = start < 0 ? sorted.length : start
    const page = sorted.slice(from, from + f.limit)
    const last = page.at(-1)
    return {
      results: page.map(([, g]) => ({ ...g, ruleKind: this.kindOf(g.ruleId) })),
      next: last && from + f.limit < sorted.length ? { lastTime: last[1].lastTime, key: last[0] } : null,
    }
  }

  /** The stored record at a location a rule error still held names; null when none names it or it cannot be read. */
  async record(partition: string, offset: number): Promise<unknown> {
    const w = this.errors
    let named = false
    for (let i = w.length - 1; i >= w.first && !named; i--) {
      const r = w.at(i)!.record
      named = r !== null && r.partition === partition && r.offset === offset
    }
    if (!named) return null
    try {
      const [line] = await readStoredLines(this.logsRoot, [{ partition, offset }])
      return line ?? null
    } catch {
      return null
    }
  }
}
