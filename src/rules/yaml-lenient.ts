// PyYAML's leniency for quoted scalars, as a rewrite of the text before `yaml` parses it: PyYAML
// (and so panther_analysis_tool) accepts a single- or double-quoted scalar whose continuation lines
// start at any column, even 0; `yaml` and js-yaml follow the YAML 1.2 rule that they be indented.
// Indenting those lines never changes the value (a quoted scalar's line folding drops the leading
// white space of each continuation line), so they are indented, and positions are mapped back.
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
  /** Spaces inserted at the start of a line, by 1-based line number (empty: the text is unchanged). */
  inserted: Map<number, number>
}

/**
 * The text with each continuation line of a multi-line quoted scalar indented one column past the
 * scalar's opening quote when it is less indented than that. Lines holding only white space and
 * document markers are left alone (PyYAML refuses a marker inside a quoted scalar; so does `yaml`).
 */
export function indentQuotedContinuations(text: string): IndentedText {
  const inserted = new Map<number, number>()
  // A quoted scalar on several lines needs a quote and then a line break: most texts are done here.
  if (!/["'][^\n]*\n/.test(text)) return { text, inserted }
  const pads: Array<[offset: number, spaces: number]> = []
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
        const start = offset + i + 1
        let n = 0
        while (text[start + n] === ' ') n++
        const next = text[start + n]
        if (n < want && next !== '\n' && next !== '\r' && !documentMarkerAt(text, start)) pads.push([start, want - n])
      }
    }
    const nl = tok.lastIndexOf('\n')
    if (nl !== -1) lineStart = offset + nl + 1
    offset += tok.length
  }
  if (pads.length === 0) return { text, inserted }
  const parts: string[] = []
  let from = 0
  let line = 1
  for (const [at, spaces] of pads) {
    const before = text.slice(from, at)
    for (let i = before.indexOf('\n'); i !== -1; i = before.indexOf('\n', i + 1)) line++
    inserted.set(line, spaces)
    parts.push(before, ' '.repeat(spaces))
    from = at
  }
  parts.push(text.slice(from))
  return { text: parts.join(''), inserted }
}

/**
 * A LineCounter for the indented text whose positions are those of the original text: a column
 * on an indented line loses the inserted spaces (a position inside them is the line's first column).
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
