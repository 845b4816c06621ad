// The conditions every match of a simple rule meets, for detection's prefilter (engine/live.ts
// `Requirement`): each `Equals` or `IsIn` with scalar operands that its Detection requires (a
// top-level condition, or one inside a top-level All). A match needs every top-level condition, so
// a record whose value is not among the operands cannot match; simple conditions never throw on
// JSON data, so no rule error is hidden either.
import type { Requirement } from '../live.js'
import type { KeySpec, MatchExpr, RuleTree, Scalar } from './ast.js'
import { compileKeySpec, keySpecSegments } from './key-specifier.js'

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

/** The requirements of a validated rule tree. */
export function requirementsOf(tree: RuleTree): Requirement[] {
  return requiredConditions(tree.detection).map((c) => ({
    key: keyId(c.key),
    resolver: () => compileKeySpec(c.key),
    values: operandValues(c),
  }))
}
