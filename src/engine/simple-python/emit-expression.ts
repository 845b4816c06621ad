// Match expressions → Python expressions. Leaves call the condition under its YAML name
// (`Equals(_at(ev, "a"), "x")`), lists become `and` chains, combinators parenthesised `or` chains,
// `not (…)` or `OnlyOne(…)`, each under a comment naming its place in the YAML. Comprehensions (and
// combinators nested too deep for one readable expression) are hoisted into their own functions.
import type { DataPath } from '../../rules/model.js'
import { CONDITIONS, describeKeySpec, keySpecSegments, type KeySpec, type MatchExpr } from '../simple/index.js'
import { commentText, pyLiteral, pyNumber, pyString } from './py-literal.js'

export type Mode = 'detection' | 'filter'

/** Functions hoisted out of expressions, in creation order (deterministic names `_each_N`, `_part_N`). */
export interface Hoisted {
  functions: string[]
  next: number
}

interface Emitted {
  comment: string | null
  lines: string[]
}

/** Past this many nested parentheses a combinator moves into its own function (Python's parser
 * stops at 200 nested brackets; rules may nest 64 levels). */
const MAX_INLINE_DEPTH = 12

export const indent = (lines: readonly string[], by = '    '): string[] => lines.map((l) => (l === '' ? l : by + l))

/** `Detection[0].Any[1]` for a file-form path. */
function formatPath(path: DataPath): string {
  let out = ''
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out === '' ? p : `.${p}`
  return out
}

/** `_at(ev, "a", 0, STAR)`: the key specifier as one walk. */
export function emitKey(spec: KeySpec, ev = 'ev'): string {
  const steps = keySpecSegments(spec).map((s) =>
    s.kind === 'field' ? pyString(s.name) : s.kind === 'index' ? pyNumber(s.index) : 'STAR',
  )
  return `_at(${[ev, ...steps].join(', ')})`
}

export function keyComment(spec: KeySpec): string {
  return commentText(describeKeySpec(spec))
}

function operandText(expr: Extract<MatchExpr, { kind: 'compare' }>): string | null {
  const kind = CONDITIONS[expr.condition].operand
  if (kind === 'none' || expr.operand === undefined) return null
  return pyLiteral(expr.operand)
}

function emitCompare(expr: Extract<MatchExpr, { kind: 'compare' }>, mode: Mode): Emitted {
  const key = emitKey(expr.key)
  const op = operandText(expr)
  const code =
    mode === 'filter'
      ? `_filter(${[key, expr.condition, ...(op === null ? [] : [op])].join(', ')})`
      : `${expr.condition}(${[key, ...(op === null ? [] : [op])].join(', ')})`
  return { comment: `${formatPath(expr.path)}: ${keyComment(expr.key)} ${expr.condition}`, lines: [code] }
}

/** Items joined by `and` / `or` (prefixing each continuation) or as call arguments (`,`). */
function join(items: readonly Emitted[], joiner: 'and' | 'or' | ','): string[] {
  const out: string[] = []
  items.forEach((item, i) => {
    if (item.comment !== null) out.push(`# ${commentText(item.comment, 160)}`)
    const lines = [...item.lines]
    if (joiner === ',') lines[lines.length - 1] += ','
    else if (i > 0) lines[0] = `${joiner} ${lines[0]}`
    out.push(...lines)
  })
  return out
}

/** Lines of a Python expression that holds when all of `exprs` hold (`True` for none). */
export function emitAll(exprs: readonly MatchExpr[], mode: Mode, hoisted: Hoisted, depth = 0): string[] {
  if (exprs.length === 0) return ['True']
  return join(
    exprs.map((e) => emitExpr(e, mode, hoisted, depth)),
    'and',
  )
}

/** `return (` … `)` body lines for a function returning all of `exprs`. */
export function returnAll(exprs: readonly MatchExpr[], mode: Mode, hoisted: Hoisted): string[] {
  const body = emitAll(exprs, mode, hoisted, 1)
  if (body.length === 1) return [`return ${body[0]}`]
  return ['return (', ...indent(body), ')']
}

function hoist(prefix: string, comment: string, args: string, body: string[], hoisted: Hoisted): string {
  const name = `${prefix}_${++hoisted.next}`
  hoisted.functions.push(
    [`def ${name}(${args}):`, `    # ${commentText(comment, 160)}`, ...indent(body), ''].join('\n'),
  )
  return name
}

function emitExpr(expr: MatchExpr, mode: Mode, hoisted: Hoisted, depth: number): Emitted {
  const where = formatPath(expr.path)
  switch (expr.kind) {
    case 'constant':
      return {
        comment: `${where}: ${expr.value ? 'AlwaysTrue' : 'AlwaysFalse'}`,
        lines: [expr.value ? 'True' : 'False'],
      }
    case 'compare':
      return emitCompare(expr, mode)
    case 'multiKey':
      return {
        comment: `${where}: ${keyComment(expr.left)} ${expr.condition} the value of ${keyComment(expr.right)}`,
        lines: [`${expr.condition}(${emitKey(expr.left)}, ${emitKey(expr.right)})`],
      }
    case 'comprehension': {
      const comment = `${where}.Expressions, with each element of ${keyComment(expr.key)} as the event`
      const name = hoist('_each', comment, 'ev', returnAll(expr.expressions, 'detection', hoisted), hoisted)
      return {
        comment: `${where}: ${keyComment(expr.key)} ${expr.op}`,
        lines: [`${expr.op}(${emitKey(expr.key)}, ${name})`],
      }
    }
    case 'combinator': {
      const comment = `${where}: ${expr.op}${expr.items.length === 0 ? ' (empty)' : ''}`
      if (expr.items.length === 0)
        return { comment, lines: [expr.op === 'All' || expr.op === 'None' ? 'True' : 'False'] }
      if (depth >= MAX_INLINE_DEPTH) {
        const name = hoist(
          '_part',
          commentText(`${where}: ${expr.op}`),
          'ev',
          returnInline(expr, mode, hoisted),
          hoisted,
        )
        return { comment, lines: [`${name}(ev)`] }
      }
      return { comment, lines: combinatorLines(expr, mode, hoisted, depth + 1) }
    }
  }
}

function combinatorLines(
  expr: Extract<MatchExpr, { kind: 'combinator' }>,
  mode: Mode,
  hoisted: Hoisted,
  depth: number,
): string[] {
  const items = expr.items.map((e) => emitExpr(e, mode, hoisted, depth))
  switch (expr.op) {
    case 'All':
      return ['(', ...indent(join(items, 'and')), ')']
    case 'Any':
      return ['(', ...indent(join(items, 'or')), ')']
    case 'None':
      return ['not (', ...indent(join(items, 'or')), ')']
    case 'OnlyOne':
      return ['OnlyOne(', ...indent(join(items, ',')), ')']
  }
}

function returnInline(expr: Extract<MatchExpr, { kind: 'combinator' }>, mode: Mode, hoisted: Hoisted): string[] {
  const lines = combinatorLines(expr, mode, hoisted, 1)
  return [`return ${lines[0]}`, ...lines.slice(1)]
}
