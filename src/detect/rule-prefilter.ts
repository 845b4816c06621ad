// Which in-process rules of a log type can match a record, without running them all: each rule is
// filed under one of the conditions every match of it meets (its engine's `requires`, engine/live.ts:
// the value at a key is among some operand values), and a record then meets only the rules filed
// under the values it has, plus the rules with no such condition. Exact, not a heuristic: a rule
// left out would have answered "no match" without an error. Used by the rule worker, where most of
// detection's per-record work is, and by replay; 100 simple rules on a log type cost one or two
// evaluations per record.
import type { Requirement, Scalar } from '../engine/live.js'
import type { LiveRule } from './live-rules.js'

interface KeyIndex {
  resolve: (record: unknown) => unknown
  /** Operand value → rule positions (ascending). */
  byValue: Map<Scalar, number[]>
}

const isScalar = (v: unknown): v is Scalar => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'

export class RulePrefilter {
  private readonly keys: KeyIndex[] = []
  /** Rules filed under no key: every record meets them. */
  private readonly always: number[] = []
  /** Rules filed under some key (for the stats). */
  readonly indexed: number

  /** `required[i]`: the requirements of rule position i (null or none: the rule is always evaluated). */
  constructor(required: ReadonlyArray<readonly Requirement[] | null | undefined>) {
    // The key with the most distinct operand values over all rules spreads them most: each rule is
    // filed under its condition on the most spread key.
    const spread = new Map<string, Set<Scalar>>()
    for (const conds of required)
      for (const c of conds ?? []) {
        const set = spread.get(c.key) ?? new Set()
        for (const v of c.values) set.add(v)
        spread.set(c.key, set)
      }
    const byKey = new Map<string, KeyIndex>()
    let indexed = 0
    for (const [i, conds] of required.entries()) {
      let best: Requirement | null = null
      let bestSpread = -1
      for (const c of conds ?? []) {
        const n = spread.get(c.key)!.size
        if (n > bestSpread) {
          best = c
          bestSpread = n
        }
      }
      if (best === null) {
        this.always.push(i)
        continue
      }
      let key = byKey.get(best.key)
      if (!key) {
        key = { resolve: best.resolver(), byValue: new Map() }
        byKey.set(best.key, key)
        this.keys.push(key)
      }
      // A rule whose operand list is empty can never match: it is filed under no value at all.
      for (const v of new Set(best.values)) {
        const list = key.byValue.get(v)
        if (list) list.push(i)
        else key.byValue.set(v, [i])
      }
      indexed++
    }
    this.indexed = indexed
  }

  /** Positions of the rules that can match `record`, ascending. */
  candidates(record: unknown): number[] {
    if (this.keys.length === 0) return this.always
    const out = this.always.slice()
    for (const key of this.keys) {
      const v = key.resolve(record)
      if (isScalar(v)) {
        const list = key.byValue.get(v)
        if (list) for (const i of list) out.push(i)
      } else if (Array.isArray(v)) {
        // IsIn holds when an element of a list value is an operand; Equals never holds on a list,
        // but meeting the rule costs only its evaluation (it answers no match).
        for (const e of v) {
          const list = isScalar(e) ? key.byValue.get(e) : undefined
          if (list) for (const i of list) out.push(i)
        }
      }
    }
    if (out.length > 1) {
      out.sort((a, b) => a - b)
      let w = 1
      for (let r = 1; r < out.length; r++) if (out[r] !== out[w - 1]) out[w++] = out[r]!
      out.length = w
    }
    return out
  }
}

/** The prefilter of a log type's live rules (in-process): rules with requirements are filed, others always met. */
export function prefilterOfLiveRules(rules: readonly LiveRule[]): RulePrefilter {
  return new RulePrefilter(rules.map((r) => r.requires))
}
