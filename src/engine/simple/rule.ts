// A simple rule compiled as a whole: inline filters, detection and alert fields as functions of one
// event, built once from the validated tree. This is what the test runner, the benchmark and any
// future live evaluation call; `evaluateRule` is the one-event convenience on top of it.
import type { Severity } from '../../rules/model.js'
import type { RuleTree } from './ast.js'
import { compileAlertFunctions } from './alert-fields.js'
import { compileDetection, compileInlineFilters } from './compile.js'
import { DEFAULT_LIMITS, type EngineLimits } from './limits.js'
import { parseRuleTree, type TreeParse } from './validate.js'

export interface CompiledRule {
  readonly tree: RuleTree
  /** Whether the inline filters pass (true when there are none). */
  filtersPass(event: unknown): boolean
  /** The `Detection` list alone, without the inline filters. */
  detection(event: unknown): boolean
  /** The rule's outcome: the filters pass and the detection holds. */
  matches(event: unknown): boolean
  title(event: unknown): string
  dedup(event: unknown): string
  alertContext(event: unknown): Record<string, unknown>
  /** `DynamicSeverities` first match, else the file's `Severity` (null if that is not a severity). */
  severity(event: unknown): Severity | null
}

export interface RuleCompilation extends TreeParse {
  rule: CompiledRule | null
}

export interface RuleEvaluation {
  matched: boolean
  /** The alert fields, present only when the rule matched. */
  alert?: { title: string; dedup: string; alertContext: Record<string, unknown>; severity: Severity | null }
}

function compileRuleTree(tree: RuleTree, limits: EngineLimits = DEFAULT_LIMITS): CompiledRule {
  const filtersPass = compileInlineFilters(tree.inlineFilters)
  const detection = compileDetection(tree.detection)
  const alert = compileAlertFunctions(tree, limits.maxTitleLength)
  const matches = tree.inlineFilters.length === 0 ? detection : (ev: unknown) => filtersPass(ev) && detection(ev)
  return { tree, filtersPass, detection, matches, ...alert }
}

// check() and runTests() are usually called on the same file-form object; compiling it once is
// enough. Keyed weakly by that object, so a dropped rule takes its compilation with it.
const cache = new WeakMap<object, RuleCompilation>()

/** Validates and compiles a rule's file form (`rule.data`); `rule` is null when there are errors. */
export function compileRule(
  data: Readonly<Record<string, unknown>>,
  limits: EngineLimits = DEFAULT_LIMITS,
): RuleCompilation {
  const useCache = limits === DEFAULT_LIMITS
  const hit = useCache ? cache.get(data) : undefined
  if (hit !== undefined) return hit
  const parsed = parseRuleTree(data, limits)
  const result: RuleCompilation = {
    ...parsed,
    rule: parsed.tree === null ? null : compileRuleTree(parsed.tree, limits),
  }
  if (useCache) cache.set(data, result)
  return result
}

/** Evaluates one event: the outcome, and the alert fields when it matched. */
export function evaluateRule(rule: CompiledRule, event: unknown): RuleEvaluation {
  if (!rule.matches(event)) return { matched: false }
  return {
    matched: true,
    alert: {
      title: rule.title(event),
      dedup: rule.dedup(event),
      alertContext: rule.alertContext(event),
      severity: rule.severity(event),
    },
  }
}
