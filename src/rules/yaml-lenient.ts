// Quoted scalars read as PyYAML reads them, by a rewrite of the text before `yaml` parses it. PyYAML
// (and so panther_analysis_tool) accepts continuation lines at any column, even 0, where `yaml` and
// js-yaml require the YAML 1.2 indentation; indenting them never changes the value (line folding
// drops a continuation line's leading white space). Lines are kept, and columns mapped back.
import { CST, Lexer, LineCounter } from 'yaml'

/** The members of `yaml`'s lexer that the scanner below adapts (private in its declarations). */
interface LexerInternals {
  buffer: string
  continueScalar(offset: number): number
  parseQuotedScalar(): Generator<string, string>
}

const blank = (ch: string | undefined) => ch === undefined || ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n'

/** A document marker (`---` or `...` then white space or the end) at `offset`, which ends a quoted scalar in PyYAML. */
function documentMarkerAt(text: string, offset: number): boolean {
  const m = text.slice(offset, offset + 3)
  return (m === '---' || m === '...') && blank(text[offset + 3])
}

/**
 * `yaml`'s own lexer, except that a quoted scalar continues on any line (as in PyYAML) up to its
 * closing quote or a document marker; everything else is lexed exactly as `yaml` does. Used only
 * to find where quoted scalars start and end: the value still comes from the unmodified parser.
 */
function pyyamlQuotedScanner(): Lexer {
  const lexer = new Lexer()
  const inner = lexer as unknown as LexerInternals
  const strictContinue = inner.continueScalar.bind(lexer)
  const quoted = inner.parseQuotedScalar.bind(lexer)
  let inQuoted = false
  inner.continueScalar = (offset) =>
    !inQuoted ? strictContinue(offset) : documentMarkerAt(inner.buffer, offset) ? -1 : offset
  inner.parseQuotedScalar = function* () {
    // The lexer only runs while its consumer pulls tokens, so the flag covers exactly this scalar.
    inQuoted = true
    try {
      return yield* quoted()
    } finally {
      inQuoted = false
    }
  }
  return lexer
}

export interface IndentedText {
  text: string
  /** Spaces inserted at the start of a line, by 1-based line number. */
  inserted: Map<number, number>
  /** Whether the text was changed at all. */
  changed: boolean
}

/**
 * Texts `yaml` may read without error to another value than PyYAML, so the rewrite comes first: an
 * escaped line break before an empty line, and a line ending in an escaped single quote (`'''`
 * continued on a less indented line is read by `yaml` as the one-character scalar `'`).
 */
export const REWRITE_FIRST = /\\\r?\n[ \t]*\r?\n|''\r?\n/

/**
 * The text rewritten so that `yaml` reads its quoted scalars as PyYAML does, lines kept:
 * - each continuation line of a multi-line quoted scalar that is less indented than one column past
 *   the opening quote is indented to there (lines holding only white space, and document markers,
 *   which PyYAML refuses inside a quoted scalar, are left alone);
 * - a double-quoted scalar's escaped line break followed by empty lines loses its backslash, the
 *   white space before it escaped (`x \` → `x\ `): the break and empty lines then fold to one line
 *   feed per empty line, which is what the escaped form means.
 */
export function pyyamlQuotedScalars(text: string): IndentedText {
  const inserted = new Map<number, number>()
  // A quoted scalar on several lines needs a quote and then a line break: most texts are done here.
  if (!/["'][^\n]*\n/.test(text)) return { text, inserted, changed: false }
  const edits: Array<[offset: number, remove: number, insert: string]> = []
  let offset = 0
  let lineStart = 0
  let scalarBody = false
  for (const tok of pyyamlQuotedScanner().lex(text)) {
    if (tok === CST.SCALAR) {
      // The next token is the body of a plain or block scalar, whatever its first character.
      scalarBody = true
      continue
    }
    if (tok === CST.DOCUMENT || tok === CST.FLOW_END) continue
    const isQuoted = !scalarBody && (tok[0] === '"' || tok[0] === "'")
    scalarBody = false
    if (isQuoted && tok.includes('\n')) {
      const want = offset - lineStart + 1
      for (let i = tok.indexOf('\n'); i !== -1 && i < tok.length - 1; i = tok.indexOf('\n', i + 1)) {
        if (tok[0] === '"') escapedBreak(text, offset + i, edits)
        const start = offset + i + 1
        let n = 0
        while (text[start + n] === ' ') n++
        const next = text[start + n]
        if (n < want && next !== '\n' && next !== '\r' && !documentMarkerAt(text, start))
          edits.push([start, 0, ' '.repeat(want - n)])
      }
    }
    const nl = tok.lastIndexOf('\n')
    if (nl !== -1) lineStart = offset + nl + 1
    offset += tok.length
  }
  if (edits.length === 0) return { text, inserted, changed: false }
  const parts: string[] = []
  let from = 0
  let line = 1
  for (const [at, remove, insert] of edits) {
    const before = text.slice(from, at)
    for (let i = before.indexOf('\n'); i !== -1; i = before.indexOf('\n', i + 1)) line++
    if (remove === 0) inserted.set(line, insert.length)
    parts.push(before, insert)
    from = at + remove
  }
  parts.push(text.slice(from))
  return { text: parts.join(''), inserted, changed: true }
}

/** Records the rewrite of an escaped line break ending at the newline `nl` when empty lines follow it. */
function escapedBreak(text: string, nl: number, edits: Array<[number, number, string]>): void {
  let end = nl
  if (text[end - 1] === '\r') end--
  let slashes = 0
  while (text[end - 1 - slashes] === '\\') slashes++
  if (slashes % 2 === 0) return
  let j = nl + 1
  while (text[j] === ' ' || text[j] === '\t') j++
  if (text[j] !== '\n' && text[j] !== '\r') return
  let ws = end - 1
  while (text[ws - 1] === ' ' || text[ws - 1] === '\t') ws--
  // A space right after a backslash may be an escape (`\ `): it is content, not trailing space.
  let before = 0
  while (text[ws - 1 - before] === '\\') before++
  if (before % 2 === 1 && ws < end - 1) ws++
  const escaped = text.slice(ws, end - 1).replace(/[ \t]/g, (c) => (c === ' ' ? '\\ ' : '\\t'))
  edits.push([ws, end - ws, escaped])
}

/**
 * A LineCounter for the rewritten text whose positions are those of the original text: a column
 * on an indented line loses the inserted spaces (a position inside them is the line's first column).
 * Escaped line breaks are rewritten at the end of their line, where no node starts.
 */
export function originalPositions(inserted: Map<number, number>): LineCounter {
  const counter = new LineCounter()
  if (inserted.size === 0) return counter
  const indented = counter.linePos
  counter.linePos = (offset) => {
    const pos = indented(offset)
    const spaces = inserted.get(pos.line)
    return spaces === undefined ? pos : { line: pos.line, col: Math.max(1, pos.col - spaces) }
  }
  return counter
}
