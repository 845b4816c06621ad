// The simple-rule (YAML detection) engine behind the RuleEngine seam, and the public surface of
// the language for later work (the Python transpiler walks `RuleTree`; the benchmark uses
// `compileRule` / `evaluateRule`; detection the `live` member, live.ts). Pipeline: file form →
// validate → tree → closures.
import type { RuleEngine } from '../engine.js'
import { simpleLive } from './live.js'
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
  live: simpleLive,
}

export type * from './ast.js'
export {
  CONDITIONS,
  CONDITION_NAMES,
  ACCEPTED_CONDITION_NAMES,
  canonicalCondition,
  positiveOf,
} from './condition-names.js'
export { compileKeySpec, keySpecSegments, describeKeySpec, MISSING, type Resolver } from './key-specifier.js'
export { parseKeyPath, formatKeyPath } from './key-path.js'
export { parseTitleTemplate } from './alert-fields.js'
export * as ip from './ip.js'
export { DEFAULT_LIMITS } from './limits.js'
export { parseRuleTree } from './validate.js'
export { compileRule, evaluateRule, type CompiledRule } from './rule.js'
export { runSimpleRuleTests } from './run-tests.js'
