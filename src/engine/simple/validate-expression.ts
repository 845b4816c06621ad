// Match expressions from the file form to the validated tree (ast.ts). One pass decides the shape
// of each map (key/value, key/values, key-only, multi-key, list comprehension, absolute, enrichment,
// combinator), reports every problem with its path instead of stopping at the first, and refuses
// to descend past `maxDepth` so hostile nesting ends in a located problem, not a stack overflow.
import type { DataPath } from '../../rules/model.js'
import type { ComprehensionOp, CombinatorOp, KeySpec, MatchExpr, Scalar } from './ast.js'
import { ACCEPTED_CONDITION_NAMES, CONDITIONS, canonicalCondition, type ConditionName } from './condition-names.js'
import { operandFits } from './conditions.js'
import { caseHint, typeName, type ProblemSink } from './problems.js'
import { KEY_SPEC_KEYS, keySpecKeysIn, parseKeySpecEntry, parseKeySpecMap } from './validate-key-spec.js'
import { isPlainObject } from '../../is-plain-object.js'

/** `detection`: the full language. `filter`: what `InlineFilters` allow (spec §1.4). */
export type ExprMode = 'detection' | 'filter'

const COMBINATORS: readonly CombinatorOp[] = ['All', 'Any', 'OnlyOne', 'None']
const FILTER_COMBINATORS: readonly CombinatorOp[] = ['All', 'Any']
const OPERAND_KEYS = ['Condition', 'Value', 'Values', 'Expressions'] as const
const KNOWN_KEYS: readonly string[] = [...KEY_SPEC_KEYS, ...OPERAND_KEYS, ...COMBINATORS]

interface Walk {
  sink: ProblemSink
  mode: ExprMode
}

const has = (m: Record<string, unknown>, k: string) => Object.hasOwn(m, k)
const isScalar = (v: unknown): v is Scalar => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'

/** A list of match expressions (`Detection`, `InlineFilters`, `Conditions`, `Expressions`, `All` …). */
export function parseExpressionList(
  raw: unknown,
  path: DataPath,
  sink: ProblemSink,
  mode: ExprMode,
  depth = 1,
): MatchExpr[] | null {
  return parseList(raw, path, { sink, mode }, depth)
}

function parseList(raw: unknown, path: DataPath, w: Walk, depth: number): MatchExpr[] | null {
  if (!Array.isArray(raw)) {
    w.sink.error(path, `must be a list of match expressions, not ${typeName(raw)}`)
    return null
  }
  if (depth > w.sink.limits.maxDepth) {
    w.sink.error(path, `match expressions are nested deeper than ${w.sink.limits.maxDepth} levels`, 'NestingTooDeep')
    return null
  }
  const out: MatchExpr[] = []
  let ok = true
  for (let i = 0; i < raw.length; i++) {
    const e = parseExpr(raw[i], [...path, i], w, depth)
    if (e === null) ok = false
    else out.push(e)
  }
  return ok ? out : null
}

function parseExpr(raw: unknown, path: DataPath, w: Walk, depth: number): MatchExpr | null {
  const { sink } = w
  if (!isPlainObject(raw)) {
    sink.error(path, `a match expression must be a map, not ${typeName(raw)}`)
    return null
  }
  let ok = true
  for (const k of Object.keys(raw)) {
    if (!KNOWN_KEYS.includes(k)) {
      ok = false
      sink.error(
        [...path, k],
        () =>
          `unknown key ${sink.quote(k)}${caseHint(k, KNOWN_KEYS)}; a match expression has a key specifier (${KEY_SPEC_KEYS.join(', ')}), Condition, Value, Values, Expressions, or one of ${COMBINATORS.join(', ')}`,
      )
    }
  }
  const combinators = COMBINATORS.filter((k) => has(raw, k))
  if (combinators.length > 0) {
    const shapeOk = checkCombinator(raw, combinators, path, w)
    // Every list is still walked so that one pass reports the problems inside them too.
    const bodies = combinators.map((op) => parseCombinatorBody(raw, op, path, w, depth))
    return shapeOk && ok ? bodies[0]! : null
  }

  if (!has(raw, 'Condition')) {
    sink.error(path, `a match expression needs a Condition (or one of ${COMBINATORS.join(', ')})`)
    return null
  }
  const condition = parseConditionName(raw.Condition, [...path, 'Condition'], sink)
  const keys = keySpecKeysIn(raw)
  if (keys.length > 1) {
    sink.error(path, `mixes ${keys.length} key specifiers (${keys.join(', ')}); use exactly one`)
    ok = false
  }
  if (has(raw, 'Value') && has(raw, 'Values')) {
    sink.error(path, 'mixes Value and Values; a condition takes one or the other')
    ok = false
  }
  if (condition === null || !ok) {
    // Still validate the key specifiers and nested expressions so one pass reports them too.
    for (const k of keys) parseKeySpecEntry(raw, k, path, sink)
    if (Array.isArray(raw.Expressions)) parseList(raw.Expressions, [...path, 'Expressions'], w, depth + 1)
    return null
  }
  const info = CONDITIONS[condition]
  switch (info.operand) {
    case 'constant':
      return parseConstant(raw, condition, path, w)
    case 'expressions':
      return parseComprehension(raw, condition as ComprehensionOp, keys, path, w, depth)
    default:
      if (keys.length === 0 && has(raw, 'Values') && info.operand !== 'none')
        return parseMultiKey(raw, condition, path, w)
      return parseCompare(raw, condition, keys, path, w)
  }
}

function parseConditionName(raw: unknown, path: DataPath, sink: ProblemSink): ConditionName | null {
  if (typeof raw !== 'string') {
    sink.error(path, `Condition must be a condition name, not ${typeName(raw)}`)
    return null
  }
  const name = canonicalCondition(raw)
  if (name === undefined) {
    sink.error(
      path,
      () =>
        `unknown condition ${sink.quote(raw)}${caseHint(raw, ACCEPTED_CONDITION_NAMES)}; valid conditions: ${ACCEPTED_CONDITION_NAMES.join(', ')}`,
      'UnknownCondition',
    )
    return null
  }
  return name
}

function checkCombinator(raw: Record<string, unknown>, present: CombinatorOp[], path: DataPath, w: Walk): boolean {
  const { sink } = w
  let ok = true
  if (present.length > 1) {
    sink.error(path, `has ${present.join(' and ')}; a combinator map has exactly one of ${COMBINATORS.join(', ')}`)
    ok = false
  }
  const others = Object.keys(raw).filter((k) => KNOWN_KEYS.includes(k) && !COMBINATORS.includes(k as CombinatorOp))
  for (const k of others) {
    sink.error(
      [...path, k],
      `a combinator (${present[0]}) cannot be mixed with ${k} in one map; put the condition inside its list`,
    )
    ok = false
  }
  if (w.mode === 'filter') {
    for (const op of present) {
      if (!FILTER_COMBINATORS.includes(op)) {
        sink.error([...path, op], `${op} is not allowed in InlineFilters (only All and Any)`)
        ok = false
      }
    }
  }
  return ok
}

function parseCombinatorBody(
  raw: Record<string, unknown>,
  op: CombinatorOp,
  path: DataPath,
  w: Walk,
  depth: number,
): MatchExpr | null {
  const items = parseList(raw[op], [...path, op], w, depth + 1)
  return items === null ? null : { kind: 'combinator', path, op, items }
}

function forbid(
  raw: Record<string, unknown>,
  keys: readonly string[],
  path: DataPath,
  sink: ProblemSink,
  why: string,
): boolean {
  let ok = true
  for (const k of keys) {
    if (has(raw, k)) {
      sink.error([...path, k], `${k} ${why}`)
      ok = false
    }
  }
  return ok
}

function parseConstant(
  raw: Record<string, unknown>,
  condition: ConditionName,
  path: DataPath,
  w: Walk,
): MatchExpr | null {
  if (w.mode === 'filter') {
    w.sink.error([...path, 'Condition'], `${condition} is not allowed in InlineFilters`)
    return null
  }
  const ok = forbid(
    raw,
    [...KEY_SPEC_KEYS, 'Value', 'Values', 'Expressions'],
    path,
    w.sink,
    `is not allowed with ${condition}, which takes nothing else`,
  )
  return ok ? { kind: 'constant', path, value: condition === 'AlwaysTrue' } : null
}

function keySpecOf(
  raw: Record<string, unknown>,
  keys: readonly string[],
  path: DataPath,
  w: Walk,
  condition: string,
): KeySpec | null {
  const { sink } = w
  if (keys.length === 0) {
    sink.error(path, `${condition} needs a key specifier (${KEY_SPEC_KEYS.join(', ')})`)
    return null
  }
  const key = keys[0] as (typeof KEY_SPEC_KEYS)[number]
  const spec = parseKeySpecEntry(raw, key, path, sink)
  if (spec !== null && w.mode === 'filter' && spec.kind !== 'keyPath' && spec.kind !== 'enrichment') {
    sink.error([...path, key], `InlineFilters address fields with KeyPath (or Enrichment), not ${key}`)
    return null
  }
  return spec
}

function parseComprehension(
  raw: Record<string, unknown>,
  op: ComprehensionOp,
  keys: readonly string[],
  path: DataPath,
  w: Walk,
  depth: number,
): MatchExpr | null {
  if (w.mode === 'filter') {
    w.sink.error([...path, 'Condition'], `${op} (list comprehension) is not allowed in InlineFilters`)
    return null
  }
  const key = keySpecOf(raw, keys, path, w, op)
  const okExtra = forbid(
    raw,
    ['Value', 'Values'],
    path,
    w.sink,
    `is not allowed with ${op}; list comprehensions take Expressions`,
  )
  if (!has(raw, 'Expressions')) {
    w.sink.error(path, `${op} needs Expressions (a list of match expressions evaluated on each element)`)
    return null
  }
  const expressions = parseList(raw.Expressions, [...path, 'Expressions'], w, depth + 1)
  if (key === null || expressions === null || !okExtra) return null
  return { kind: 'comprehension', path, key, op, expressions }
}

function parseMultiKey(
  raw: Record<string, unknown>,
  condition: ConditionName,
  path: DataPath,
  w: Walk,
): MatchExpr | null {
  const { sink } = w
  const values = raw.Values
  const at = [...path, 'Values']
  if (!Array.isArray(values) || !values.every(isPlainObject)) {
    sink.error(
      path,
      `${condition} needs a key specifier (${KEY_SPEC_KEYS.join(', ')}); a Values list without one is a multi-key comparison and must hold two key specifiers`,
    )
    return null
  }
  if (w.mode === 'filter') {
    sink.error(at, 'multi-key comparisons are not allowed in InlineFilters')
    return null
  }
  const okExtra = forbid(raw, ['Expressions'], path, sink, `is not allowed with ${condition}`)
  if (values.length !== 2) {
    sink.error(at, `a multi-key comparison compares exactly two key specifiers, not ${values.length}`)
    return null
  }
  const left = parseKeySpecMap(values[0], [...at, 0], sink, 'the left operand')
  const right = parseKeySpecMap(values[1], [...at, 1], sink, 'the right operand')
  if (left === null || right === null || !okExtra) return null
  return { kind: 'multiKey', path, condition, left, right }
}

function parseCompare(
  raw: Record<string, unknown>,
  condition: ConditionName,
  keys: readonly string[],
  path: DataPath,
  w: Walk,
): MatchExpr | null {
  const { sink } = w
  const info = CONDITIONS[condition]
  const key = keySpecOf(raw, keys, path, w, condition)
  let ok = forbid(
    raw,
    ['Expressions'],
    path,
    sink,
    `is only used by list comprehensions (AnyElement, AllElements, OnlyOneElement, NoElement), not ${condition}`,
  )
  if (info.operand === 'none') {
    for (const k of ['Value', 'Values'])
      if (has(raw, k)) sink.warn([...path, k], `${k} is ignored: ${condition} takes no operand`)
    return key !== null && ok ? { kind: 'compare', path, key, condition } : null
  }
  if (info.operand === 'values') {
    if (has(raw, 'Value')) {
      sink.error([...path, 'Value'], `${condition} takes Values (a list of scalars), not Value`)
      return null
    }
    const operand = parseValues(raw.Values, has(raw, 'Values'), [...path, 'Values'], condition, sink)
    return key !== null && operand !== null && ok ? { kind: 'compare', path, key, condition, operand } : null
  }
  if (has(raw, 'Values')) {
    sink.error(
      [...path, 'Values'],
      `${condition} takes one Value, not Values${condition === 'Equals' ? ' (use IsIn for a list)' : ''}`,
    )
    return null
  }
  if (!has(raw, 'Value')) {
    sink.error(path, `${condition} needs a Value`)
    return null
  }
  const value = raw.Value
  const at = [...path, 'Value']
  if (value === null) {
    sink.error(at, `Value is null; to test for null use IsNull / IsNotNull`)
    ok = false
  } else if (!isScalar(value)) {
    sink.error(
      at,
      `Value must be a string, number or boolean, not ${typeName(value)}${Array.isArray(value) ? ' (use IsIn with Values for a list)' : ''}`,
    )
    ok = false
  } else if (!operandFits(info.operandType, value)) {
    const want =
      info.operandType === 'number'
        ? 'a number'
        : info.operandType === 'cidr'
          ? 'a CIDR such as 10.0.0.0/8 or 2001:db8::/32'
          : 'a string'
    sink.error(
      at,
      `${condition} needs ${want}, not ${sink.quote(value)} (comparisons are typed; there is no string/number coercion)`,
    )
    ok = false
  }
  return key !== null && ok ? { kind: 'compare', path, key, condition, operand: value as Scalar } : null
}

function parseValues(
  raw: unknown,
  present: boolean,
  path: DataPath,
  condition: string,
  sink: ProblemSink,
): Scalar[] | null {
  if (!present) {
    sink.error(path.slice(0, -1), `${condition} needs Values (a list of scalars)`)
    return null
  }
  if (!Array.isArray(raw)) {
    sink.error(path, `Values must be a list of scalars, not ${typeName(raw)}`)
    return null
  }
  let ok = true
  raw.forEach((v, i) => {
    if (!isScalar(v)) {
      ok = false
      sink.error([...path, i], `Values items must be strings, numbers or booleans, not ${typeName(v)}`)
    }
  })
  if (!ok) return null
  const types = new Set(raw.map((v) => typeof v))
  if (types.size > 1) {
    sink.error(
      path,
      `Values mixes ${[...types].join(' and ')} items; all must have one type (comparisons are typed, so quote numbers meant as strings)`,
    )
    return null
  }
  if (raw.length === 0) sink.warn(path, `Values is empty: ${condition} can never hold`)
  return raw as Scalar[]
}
