// The validated tree of a simple rule's YAML detection language: what `validate.ts` produces from
// the file form and what `compile.ts` (closures), the benchmark's baseline interpreter and the
// Python transpiler walk. Every node is plain data (JSON-serialisable), immutable by convention,
// and already checked: a consumer never re-validates shapes, operand types or condition names.
import type { DataPath, Severity } from '../../rules/model.js'
import type { ConditionName } from './condition-names.js'

export type { ConditionName } from './condition-names.js'

/** An operand of `Value` / `Values`: JSON scalars only (null is rejected by validation). */
export type Scalar = string | number | boolean

/** One step of a parsed `KeyPath`: an object field, an array index, or `[*]`. */
export type PathSegment = { kind: 'field'; name: string } | { kind: 'index'; index: number } | { kind: 'wildcard' }

/**
 * Where a value comes from. All four resolve to one of three states: missing, null or a value.
 * `enrichment` is `p_enrichment.<table>.<selector>` followed by `fieldPath` (KeyPath syntax).
 */
export type KeySpec =
  | { kind: 'key'; name: string }
  | { kind: 'deepKey'; steps: ReadonlyArray<string | number> }
  | { kind: 'keyPath'; text: string; segments: readonly PathSegment[] }
  | { kind: 'enrichment'; table: string; selector: string; fieldPath: string; segments: readonly PathSegment[] }

export type CombinatorOp = 'All' | 'Any' | 'OnlyOne' | 'None'
export type ComprehensionOp = 'AnyElement' | 'AllElements' | 'OnlyOneElement' | 'NoElement'

/**
 * A match expression. `path` is where it sits in the file form (for messages and for the
 * transpiler's comments). `condition` is always the canonical name (aliases such as
 * `IsGreaterThanOrEqual` are already folded). Meaning, for a consumer that evaluates or
 * translates the tree (compile.ts is the reference):
 * - `compare`: resolve `key` (missing / null / value), apply the condition with `operand`
 *   (a scalar for Value conditions, a list for IsIn / IsNotIn, absent for unary ones). A negated
 *   condition (see `CONDITIONS[name].negates`) is `not` of its positive form.
 * - `multiKey`: as `compare`, with the operand taken from the event at `right` per evaluation.
 * - `comprehension`: `key` must resolve to a list; `expressions` (all must hold) are evaluated with
 *   each element as the event. Non-list or missing: false, except `NoElement` (true);
 *   `AllElements` on an empty list is false.
 * - `combinator`: All (empty → true), Any (empty → false), OnlyOne (exactly one; empty → false),
 *   None (empty → true).
 * - In `RuleTree.inlineFilters` only `compare` (KeyPath / enrichment keys) and All / Any occur,
 *   and a `compare` whose key resolves to missing holds whatever its condition.
 */
export type MatchExpr =
  /** key / value, key / values and key-only shapes (operand absent for unary conditions). */
  | { kind: 'compare'; path: DataPath; key: KeySpec; condition: ConditionName; operand?: Scalar | readonly Scalar[] }
  /** multi-key: the condition applied to `left` with the value of `right` as its operand. */
  | { kind: 'multiKey'; path: DataPath; condition: ConditionName; left: KeySpec; right: KeySpec }
  | { kind: 'comprehension'; path: DataPath; key: KeySpec; op: ComprehensionOp; expressions: readonly MatchExpr[] }
  | { kind: 'constant'; path: DataPath; value: boolean }
  | { kind: 'combinator'; path: DataPath; op: CombinatorOp; items: readonly MatchExpr[] }

/** A piece of an `AlertTitle`: literal text or a `{KeyPath}` placeholder. */
export type TitlePart = { kind: 'text'; text: string } | { kind: 'placeholder'; key: KeySpec & { kind: 'keyPath' } }

export interface ContextEntry {
  keyName: string
  key: KeySpec
}

export interface SeverityRule {
  changeTo: Severity
  conditions: readonly MatchExpr[]
}

/**
 * Everything of a simple rule the engine evaluates. `inlineFilters` use the filter semantics
 * (a leaf on a missing field passes); everything else the detection semantics.
 */
export interface RuleTree {
  ruleId: string
  detection: readonly MatchExpr[]
  inlineFilters: readonly MatchExpr[]
  /** Absent: the title falls back to `fallbackTitle` (DisplayName, then RuleID). */
  alertTitle?: readonly TitlePart[]
  fallbackTitle: string
  alertContext?: readonly ContextEntry[]
  dynamicSeverities?: readonly SeverityRule[]
  /** The file's `Severity`, upper-cased; null when it is not one of the five. */
  severity: Severity | null
  groupBy?: readonly KeySpec[]
}
