// The simple-rule (YAML detection) engine behind the RuleEngine seam, and the public surface of
// the language for later work (the Python transpiler walks `RuleTree`; the benchmark and any live
// evaluation use `compileRule` / `evaluateRule`). Pipeline: file form → validate → tree → closures.
import type { RuleEngine } from '../engine.js'
import { compileRule } from './rule.js'
import { runSimpleRuleTests } from './run-tests.js'

export const simpleEngine: RuleEngine = {
  kind: 'simple',
  check(rule) {
    const { errors, warnings } = compileRule(rule.data)
    return { errors, warnings }
  },
  async runTests(rule) {
    const { rule: compiled, errors } = compileRule(rule.data)
    return runSimpleRuleTests(rule.data, compiled, errors)
  },
}

export type * from './ast.js'
export {
  CONDITIONS,
  CONDITION_NAMES,
  ACCEPTED_CONDITION_NAMES,
  canonicalCondition,
  positiveOf,
} from './condition-names.js'
export type {
  ConditionInfo,
  OperandKind,
  OperandType,
  PositiveConditionName,
  NegatedConditionName,
} from './condition-names.js'
export { CONDITION_TABLE, buildConditionTest, buildPositiveTest, operandFits, type ValueTest } from './conditions.js'
export {
  compileAll,
  compileDetection,
  compileExpression,
  compileInlineFilters,
  type Predicate,
  type ExpressionMode,
} from './compile.js'
export {
  compileKeySpec,
  compileSegments,
  getField,
  keySpecSegments,
  plainFieldNames,
  describeKeySpec,
  MISSING,
  type Missing,
  type Resolver,
} from './key-specifier.js'
export { parseKeyPath, formatKeyPath } from './key-path.js'
export { parseTitleTemplate, renderValue, cutTitle } from './alert-fields.js'
export * as ip from './ip.js'
export { DEFAULT_LIMITS, type EngineLimits } from './limits.js'
export { parseRuleTree, parseSeverity, type TreeParse } from './validate.js'
export { parseExpressionList, type ExprMode } from './validate-expression.js'
export {
  compileRule,
  compileRuleTree,
  evaluateRule,
  type CompiledRule,
  type RuleCompilation,
  type RuleEvaluation,
} from './rule.js'
export { runSimpleRuleTests } from './run-tests.js'
