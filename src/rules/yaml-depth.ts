// Nesting bounds of YAML text, checked before the `yaml` composer sees it. The composer recurses
// once per nesting level; near the end of the stack V8 aborts the whole process (a regexp of the
// core schema tiers up with no stack left: "RegExpCompiler Allocation failed"), so depth must be
// refused before composing. Two linear passes: a character scan that refuses the obvious (10,000
// brackets) in microseconds, then `yaml`'s own lexer, whose tokens are exactly what the composer
// nests on, for a bound that quoting, comments and block scalars cannot hide from.
import { CST, Lexer } from 'yaml'

/**
 * An approximate upper bound of the nesting of `text`: flow brackets outside quotes and comments,
 * plus the compact block indicators (`- - -`, `? ? ?`) at the start of a line. Stops counting once
 * past `limit`. Quick, not exact (the lexer pass is the sound one).
 */
export function quickDepthBound(text: string, limit: number, where?: { offset: number }): number {
  let flow = 0
  let max = 0
  let lineStart = true
  let compact = 0
  let prev = '\n' // last non-blank character, '\n' at the start of a line
  let indent = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 10) {
      lineStart = true
      compact = 0
      indent = 0
      prev = '\n'
      continue
    }
    if (c === 32 || c === 9) {
      if (prev === '\n') indent++
      continue
    }
    const ch = text[i]!
    if ((ch === '|' || ch === '>') && flow === 0 && (prev === '\n' || prev === ':' || prev === '-' || prev === '?')) {
      // A block scalar: its content is the following lines indented deeper than this one.
      i = blockScalarEnd(text, i, indent)
      continue
    }
    if (
      lineStart &&
      (ch === '-' || ch === '?') &&
      (i + 1 === text.length || text[i + 1] === ' ' || text[i + 1] === '\n')
    ) {
      compact++
      if (compact + flow > max) max = compact + flow
      if (max > limit) return exceeded(where, i, max)
      prev = ch
      continue
    }
    lineStart = false
    if (ch === '#' && (i === 0 || text[i - 1] === ' ' || text[i - 1] === '\t' || text[i - 1] === '\n')) {
      const nl = text.indexOf('\n', i)
      if (nl < 0) break
      i = nl - 1
      continue
    }
    if ((ch === '"' || ch === "'") && (prev === '\n' || '[{,:-?'.includes(prev))) {
      i = quoteEnd(text, i, ch)
      prev = ch
      continue
    }
    if (ch === '[' || ch === '{') {
      flow++
      if (compact + flow > max) max = compact + flow
      if (max > limit) return exceeded(where, i, max)
    } else if ((ch === ']' || ch === '}') && flow > 0) flow--
    prev = ch
  }
  return max
}

/** Records where the bound was passed (the refusal is located there) and returns the bound. */
function exceeded(where: { offset: number } | undefined, offset: number, bound: number): number {
  if (where) where.offset = offset
  return bound
}

/** Index of the newline that ends the block scalar whose header is at `start`. */
function blockScalarEnd(text: string, start: number, indent: number): number {
  let nl = text.indexOf('\n', start)
  while (nl >= 0) {
    let j = nl + 1
    while (text[j] === ' ') j++
    if (j < text.length && text[j] !== '\n' && j - nl - 1 <= indent) return nl - 1
    nl = text.indexOf('\n', j)
  }
  return text.length
}

/** Index of the closing quote of the quoted scalar opened at `start` (or the end of the text). */
function quoteEnd(text: string, start: number, q: string): number {
  for (let i = start + 1; i < text.length; i++) {
    const ch = text[i]
    if (q === '"' && ch === '\\') i++
    else if (ch === q) {
      if (q === "'" && text[i + 1] === "'") i++
      else return i
    }
  }
  return text.length
}

/**
 * An upper bound of the collection nesting the `yaml` composer will meet in `text`, from the
 * tokens of its lexer: flow depth exactly, block depth as two levels per open indentation column
 * (at one column a block map can hold a block sequence, nothing deeper), counting the columns
 * opened by compact indicators (`- - x`, `? - k`). Returns early once past `limit`.
 */
export function lexedDepthBound(text: string, limit: number, where?: { offset: number }): number {
  const columns: number[] = []
  let flow = 0
  let max = 0
  let col = 0
  let lineStart = true
  let compact = false
  let scalarNext = false
  let offset = 0
  for (const tok of new Lexer().lex(text)) {
    offset += tok === CST.DOCUMENT || tok === CST.FLOW_END || tok === CST.SCALAR ? 0 : tok.length
    if (tok === CST.SCALAR) {
      scalarNext = true
      continue
    }
    if (tok === CST.DOCUMENT || tok === CST.FLOW_END || tok === CST.BOM) continue
    const type = scalarNext ? 'scalar-source' : CST.tokenType(tok)
    scalarNext = false
    if (type === 'newline') {
      col = 0
      lineStart = true
      continue
    }
    if (type === 'space' || type === 'comment') {
      col += tok.length
      continue
    }
    if (type === 'doc-start') columns.length = 0
    if (flow === 0) {
      if (lineStart) {
        while (columns.length > 0 && columns[columns.length - 1]! > col) columns.pop()
        if (columns.length === 0 || columns[columns.length - 1]! < col) columns.push(col)
      } else if (compact && (columns.length === 0 || columns[columns.length - 1]! < col)) columns.push(col)
      compact = type === 'seq-item-ind' || type === 'explicit-key-ind'
    }
    lineStart = false
    if (type === 'flow-seq-start' || type === 'flow-map-start') flow++
    else if ((type === 'flow-seq-end' || type === 'flow-map-end') && flow > 0) flow--
    const bound = 2 * columns.length + flow + (compact ? 2 : 0)
    if (bound > max) max = bound
    if (max > limit) return exceeded(where, offset - tok.length, max)
    const nl = tok.lastIndexOf('\n')
    col = nl < 0 ? col + tok.length : tok.length - nl - 1
  }
  return max
}
