// `InlineFilters` of Python rules (detections.md §4, §5.2): the simple-rule filter language, checked
// and compiled by the simple engine, applied to a test's event before rule() runs. An event the
// filters reject is a non-match and never reaches the Python worker.
import type { RuleProblem } from '../../rules/model.js'
import { compileInlineFilters, type Predicate } from '../simple/compile.js'
import { ProblemSink } from '../simple/problems.js'
import { parseExpressionList } from '../simple/validate-expression.js'

export interface FilterCompilation {
  /** null when the rule has no filters or they are invalid. */
  filtersPass: Predicate | null
  errors: RuleProblem[]
  warnings: RuleProblem[]
}

const NONE: FilterCompilation = { filtersPass: null, errors: [], warnings: [] }
// check() and runTests() see the same file-form object: compile once per object.
const cache = new WeakMap<object, FilterCompilation>()

export function compileRuleFilters(data: Readonly<Record<string, unknown>>): FilterCompilation {
  const raw = data.InlineFilters
  if (raw === undefined || raw === null) return NONE
  const hit = cache.get(data)
  if (hit) return hit
  const sink = new ProblemSink()
  const exprs = parseExpressionList(raw, ['InlineFilters'], sink, 'filter')
  const { errors, warnings } = sink.result()
  const result: FilterCompilation = {
    filtersPass: exprs !== null && errors.length === 0 ? compileInlineFilters(exprs) : null,
    errors,
    warnings,
  }
  cache.set(data, result)
  return result
}
