// The validated tree compiled to closures: each node becomes one `(event) => boolean` built once,
// with key specifiers pre-resolved to walkers and operands pre-processed (lower-cased, turned into
// Sets, CIDRs parsed). Evaluation then does no parsing, no name lookups and no allocation on the
// common paths. `filter` mode gives InlineFilters their meaning: a leaf on a missing field passes.
import type { MatchExpr } from './ast.js'
import { buildConditionTest, buildPositiveTest } from './conditions.js'
import { compileKeySpec, getField, MISSING, plainFieldNames } from './key-specifier.js'

export type Predicate = (event: unknown) => boolean
export type ExpressionMode = 'detection' | 'filter'

const TRUE: Predicate = () => true
const FALSE: Predicate = () => false

/**
 * All of a list (the meaning of `Detection`, `InlineFilters`, `Conditions` and `Expressions`).
 * Short lists are unrolled: most rules have a handful of top-level conditions.
 */
export function compileAll(exprs: readonly MatchExpr[], mode: ExpressionMode = 'detection'): Predicate {
  const parts = exprs.map((e) => compileExpression(e, mode))
  switch (parts.length) {
    case 0:
      return TRUE
    case 1:
      return parts[0]!
    case 2: {
      const [a, b] = parts as [Predicate, Predicate]
      return (ev) => a(ev) && b(ev)
    }
    case 3: {
      const [a, b, c] = parts as [Predicate, Predicate, Predicate]
      return (ev) => a(ev) && b(ev) && c(ev)
    }
    case 4: {
      const [a, b, c, d] = parts as [Predicate, Predicate, Predicate, Predicate]
      return (ev) => a(ev) && b(ev) && c(ev) && d(ev)
    }
    case 5: {
      const [a, b, c, d, e] = parts as [Predicate, Predicate, Predicate, Predicate, Predicate]
      return (ev) => a(ev) && b(ev) && c(ev) && d(ev) && e(ev)
    }
    default:
      return (ev) => {
        for (let i = 0; i < parts.length; i++) if (!parts[i]!(ev)) return false
        return true
      }
  }
}

/** The rule's `Detection` list as one predicate. */
export function compileDetection(exprs: readonly MatchExpr[]): Predicate {
  return compileAll(exprs, 'detection')
}

/** The rule's `InlineFilters` list as one predicate (an empty or absent list passes). */
export function compileInlineFilters(exprs: readonly MatchExpr[]): Predicate {
  return compileAll(exprs, 'filter')
}

function compileExpression(expr: MatchExpr, mode: ExpressionMode = 'detection'): Predicate {
  switch (expr.kind) {
    case 'constant':
      return expr.value ? TRUE : FALSE
    case 'compare':
      return compileCompare(expr, mode)
    case 'multiKey': {
      const left = compileKeySpec(expr.left)
      const right = compileKeySpec(expr.right)
      const condition = expr.condition
      // The operand comes from the event, so the test is built per evaluation; a right side that
      // is missing, null or of the wrong type makes the positive condition false.
      return (ev) => buildConditionTest(condition, right(ev))(left(ev))
    }
    case 'comprehension':
      return compileComprehension(expr)
    case 'combinator':
      return compileCombinator(expr, mode)
  }
}

/**
 * A leaf. The hot path of every rule, so the negation and one- or two-field walks are fused into
 * the closure itself rather than composed from smaller ones (each avoided call is measurable).
 */
function compileCompare(expr: Extract<MatchExpr, { kind: 'compare' }>, mode: ExpressionMode): Predicate {
  const { test, negated } = buildPositiveTest(expr.condition, expr.operand)
  if (mode === 'filter') {
    const resolve = compileKeySpec(expr.key)
    return (ev) => {
      const v = resolve(ev)
      return v === MISSING || test(v) !== negated
    }
  }
  const names = plainFieldNames(expr.key)
  if (names !== null && names.length === 1) {
    const a = names[0]!
    return negated ? (ev) => !test(getField(ev, a)) : (ev) => test(getField(ev, a))
  }
  if (names !== null && names.length === 2) {
    const [a, b] = names as [string, string]
    return negated
      ? (ev) => {
          const v = getField(ev, a)
          return !test(v === MISSING ? v : getField(v, b))
        }
      : (ev) => {
          const v = getField(ev, a)
          return test(v === MISSING ? v : getField(v, b))
        }
  }
  const resolve = compileKeySpec(expr.key)
  return negated ? (ev) => !test(resolve(ev)) : (ev) => test(resolve(ev))
}

function compileComprehension(expr: Extract<MatchExpr, { kind: 'comprehension' }>): Predicate {
  const resolve = compileKeySpec(expr.key)
  const each = compileAll(expr.expressions, 'detection')
  switch (expr.op) {
    case 'AnyElement':
      return (ev) => {
        const list = resolve(ev)
        if (!Array.isArray(list)) return false
        for (let i = 0; i < list.length; i++) if (each(list[i])) return true
        return false
      }
    case 'AllElements':
      return (ev) => {
        const list = resolve(ev)
        if (!Array.isArray(list) || list.length === 0) return false
        for (let i = 0; i < list.length; i++) if (!each(list[i])) return false
        return true
      }
    case 'OnlyOneElement':
      return (ev) => {
        const list = resolve(ev)
        if (!Array.isArray(list)) return false
        let n = 0
        for (let i = 0; i < list.length; i++) if (each(list[i]) && ++n > 1) return false
        return n === 1
      }
    case 'NoElement':
      return (ev) => {
        const list = resolve(ev)
        if (!Array.isArray(list)) return true
        for (let i = 0; i < list.length; i++) if (each(list[i])) return false
        return true
      }
  }
}

function compileCombinator(expr: Extract<MatchExpr, { kind: 'combinator' }>, mode: ExpressionMode): Predicate {
  if (expr.op === 'All') return compileAll(expr.items, mode)
  const parts = expr.items.map((e) => compileExpression(e, mode))
  switch (expr.op) {
    case 'Any':
      return (ev) => {
        for (let i = 0; i < parts.length; i++) if (parts[i]!(ev)) return true
        return false
      }
    case 'OnlyOne':
      return (ev) => {
        let n = 0
        for (let i = 0; i < parts.length; i++) if (parts[i]!(ev) && ++n > 1) return false
        return n === 1
      }
    case 'None':
      return (ev) => {
        for (let i = 0; i < parts.length; i++) if (parts[i]!(ev)) return false
        return true
      }
  }
}
