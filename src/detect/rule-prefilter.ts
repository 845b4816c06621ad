// Which simple rules of a log type can match a record, without running them all: each rule whose
// Detection requires an `Equals` or `IsIn` on some key (a top-level condition, or one inside a
// top-level All) is filed under that key by its operand values; a record then meets only the rules
// filed under the values it has, plus the rules with no such condition. Exact, not a heuristic:
// such a rule cannot match a record whose value is not among its operands (a match needs every
// top-level condition), so a rule left out would have answered "no match". Simple conditions never
// throw on JSON data, so no rule error is hidden either. Used by the rule worker, where most of
// detection's per-record work is, and by replay; 100 rules on a log type cost one or two evaluations
// per record.
import type { KeySpec, MatchExpr, RuleTree, Scalar } from '../engine/simple/ast.js'
import { compileKeySpec, keySpecSegments, type Resolver } from '../engine/simple/key-specifier.js'
import { compileRule } from '../engine/simple/rule.js'
import { type LiveRule, offloadableData } from './live-rules.js'

type Indexed = Extract<MatchExpr, { kind: 'compare' }> & { condition: 'Equals' | 'IsIn' }

/** Conditions a rule requires that can file it: Equals / IsIn with scalar operands. */
function requiredConditions(exprs: readonly MatchExpr[], out: Indexed[] = []): Indexed[] {
  for (const e of exprs) {
    if (e.kind === 'combinator' && e.op === 'All') requiredConditions(e.items, out)
    else if (e.kind === 'compare' && (e.condition === 'Equals' || e.condition === 'IsIn')) out.push(e as Indexed)
  }
  return out
}

const isScalar = (v: unknown): v is Scalar => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'

/** The operand values a condition accepts (as its test does: Equals a scalar, IsIn a list of them). */
function operandValues(c: Indexed): Scalar[] {
  const op = c.operand
  if (c.condition === 'Equals') return isScalar(op) ? [op] : []
  return Array.isArray(op) ? op.filter(isScalar) : isScalar(op) ? [op] : []
}

/**
 * A key's identity: the walk it resolves to. Not describeKeySpec, whose text is the same for keys
 * that resolve differently (DeepKey [a, 0] and [a, "0"]; an Enrichment Table or Selector holding a
 * dot): two such keys sharing one index would resolve one of them wrongly and lose its matches.
 */
const keyId = (spec: KeySpec): string => JSON.stringify(keySpecSegments(spec))

interface KeyIndex {
  resolve: Resolver
  /** Operand value → rule positions (ascending). */
  byValue: Map<Scalar, number[]>
}

export class RulePrefilter {
  private readonly keys: KeyIndex[] = []
  /** Rules filed under no key: every record meets them. */
  private readonly always: number[] = []
  /** Rules filed under some key (for the stats). */
  readonly indexed: number

  /** `trees[i]`: the validated tree of rule position i (null: the rule is always evaluated). */
  constructor(trees: ReadonlyArray<RuleTree | null>) {
    const required = trees.map((t) => (t === null ? [] : requiredConditions(t.detection)))
    // The key with the most distinct operand values over all rules spreads them most: each rule is
    // filed under its condition on the most spread key.
    const spread = new Map<string, Set<Scalar>>()
    for (const conds of required)
      for (const c of conds) {
        const k = keyId(c.key)
        const set = spread.get(k) ?? new Set()
        for (const v of operandValues(c)) set.add(v)
        spread.set(k, set)
      }
    const byKey = new Map<string, KeyIndex>()
    let indexed = 0
    for (const [i, conds] of required.entries()) {
      let best: Indexed | null = null
      let bestSpread = -1
      for (const c of conds) {
        const n = spread.get(keyId(c.key))!.size
        if (n > bestSpread) {
          best = c
          bestSpread = n
        }
      }
      if (best === null) {
        this.always.push(i)
        continue
      }
      const k = keyId(best.key)
      let key = byKey.get(k)
      if (!key) {
        key = { resolve: compileKeySpec(best.key), byValue: new Map() }
        byKey.set(k, key)
        this.keys.push(key)
      }
      // A rule whose operand list is empty can never match: it is filed under no value at all.
      for (const v of new Set(operandValues(best))) {
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

/** The prefilter of a log type's live rules (in-process): simple rules are filed, others always met. */
export function prefilterOfLiveRules(rules: readonly LiveRule[]): RulePrefilter {
  return new RulePrefilter(
    rules.map((r) => {
      const data = r.evaluate ? offloadableData.get(r.evaluate) : undefined
      return data ? (compileRule(data).rule?.tree ?? null) : null
    }),
  )
}
