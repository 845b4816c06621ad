// The rule errors as the API lists them (api/rule-error-routes.ts): over the detector's error list,
// which is only ever appended to (in commit order, so in time order), newest first one by one, or
// folded into one entry per rule and error text with its count (as Panther shows detection errors),
// and the stored record a rule error names (read only for a location some rule error names).
import type { RuleErrorRecord } from './detection-ledger.js'
import { readStoredLines } from './stored-log.js'

export interface RuleErrorFilter {
  ruleIds?: readonly string[]
  /** Only errors at or after this time (ISO, UTC). */
  since?: string
  limit: number
}

/** One rule's errors with the same text: how many, when, and the latest one's revision and record. */
export interface RuleErrorGroup {
  ruleId: string
  /** The served rule's kind; null when no served rule has this id (any more). */
  ruleKind: string | null
  error: string
  count: number
  firstTime: string
  lastTime: string
  revision: string | null
  record: { partition: string; offset: number } | null
}

type Folded = Omit<RuleErrorGroup, 'ruleKind'>

const keyOf = (e: { ruleId: string; error: string }) => `${e.ruleId}\u0000${e.error}`
const locationKey = (partition: string, offset: number) => `${offset}\u0000${partition}`

function fold(into: Map<string, Folded>, e: RuleErrorRecord): void {
  const key = keyOf(e)
  const g = into.get(key)
  if (!g) {
    into.set(key, {
      ruleId: e.ruleId,
      error: e.error,
      count: 1,
      firstTime: e.time,
      lastTime: e.time,
      revision: e.revision,
      record: e.record,
    })
    return
  }
  g.count++
  if (e.time < g.firstTime) g.firstTime = e.time
  if (e.time >= g.lastTime) {
    g.lastTime = e.time
    g.revision = e.revision
  }
  if (e.record) g.record = e.record
}

export class RuleErrorList {
  /** Every error folded so far (errors[0 .. folded)), and the locations they name. */
  private readonly all = new Map<string, Folded>()
  private readonly locations = new Set<string>()
  private folded = 0

  constructor(
    private readonly errors: readonly RuleErrorRecord[],
    private readonly logsRoot: string,
    private readonly kindOf: (ruleId: string) => string | null,
  ) {}

  private catchUp(): void {
    for (; this.folded < this.errors.length; this.folded++) {
      const e = this.errors[this.folded]!
      fold(this.all, e)
      if (e.record) this.locations.add(locationKey(e.record.partition, e.record.offset))
    }
  }

  /** Newest first; `before`: the position the previous page ended at (positions never change). */
  list(f: RuleErrorFilter & { before?: number }): { results: RuleErrorRecord[]; next: number | null } {
    const wanted = f.ruleIds ? new Set(f.ruleIds) : null
    const keep = (e: RuleErrorRecord) => (!wanted || wanted.has(e.ruleId)) && (!f.since || e.time >= f.since)
    const results: RuleErrorRecord[] = []
    let i = Math.min(f.before ?? this.errors.length, this.errors.length) - 1
    for (; i >= 0 && results.length < f.limit; i--) if (keep(this.errors[i]!)) results.push(this.errors[i]!)
    let more = false
    for (let j = i; j >= 0 && !more; j--) more = keep(this.errors[j]!)
    return { results, next: more ? i + 1 : null }
  }

  /** One entry per rule and error text, the latest first (ties by rule id, then text); `after`: the previous page's last. */
  groups(f: RuleErrorFilter & { after?: { lastTime: string; key: string } }): {
    results: RuleErrorGroup[]
    next: { lastTime: string; key: string } | null
  } {
    this.catchUp()
    let source: Map<string, Folded> = this.all
    if (f.since) {
      // Counts since a time: fold the errors from then on (a scan; the list has no time index).
      source = new Map()
      for (const e of this.errors) if (e.time >= f.since) fold(source, e)
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

  /** The stored record at a location some rule error names; null when none names it or it cannot be read. */
  async record(partition: string, offset: number): Promise<unknown> {
    this.catchUp()
    if (!this.locations.has(locationKey(partition, offset))) return null
    try {
      const [line] = await readStoredLines(this.logsRoot, [{ partition, offset }])
      return line ?? null
    } catch {
      return null
    }
  }
}
