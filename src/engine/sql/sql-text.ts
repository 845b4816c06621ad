// The lexical layer of the query rewrites: SQL text cut into code, string literals, quoted
// identifiers and comments, so that a rewrite (time macros, Snowflake paths) touches only code and
// never text inside a literal or a comment. Knows DuckDB's forms: '' escapes, E'…', $$…$$, "…", --, /* */.

export type PieceKind = 'code' | 'string' | 'quoted' | 'comment'

export interface Piece {
  kind: PieceKind
  text: string
}

/** The pieces of `sql` in order; their texts joined give `sql` back exactly. */
export function splitSql(sql: string): Piece[] {
  const out: Piece[] = []
  let code = ''
  const push = (kind: PieceKind, text: string) => {
    if (code) out.push({ kind: 'code', text: code })
    code = ''
    out.push({ kind, text })
  }
  let i = 0
  while (i < sql.length) {
    const c = sql[i]!
    const next = sql[i + 1]
    if (c === "'" || ((c === 'E' || c === 'e') && next === "'" && !/[\w$]/.test(sql[i - 1] ?? ''))) {
      const start = i
      i = c === "'" ? i + 1 : i + 2
      const escapes = c !== "'"
      while (i < sql.length) {
        if (escapes && sql[i] === '\\') i += 2
        else if (sql[i] === "'" && sql[i + 1] === "'") i += 2
        else if (sql[i] === "'") break
        else i++
      }
      i = Math.min(i + 1, sql.length)
      push('string', sql.slice(start, i))
    } else if (c === '"') {
      const start = i++
      while (i < sql.length) {
        if (sql[i] === '"' && sql[i + 1] === '"') i += 2
        else if (sql[i] === '"') break
        else i++
      }
      i = Math.min(i + 1, sql.length)
      push('quoted', sql.slice(start, i))
    } else if (c === '-' && next === '-') {
      const end = sql.indexOf('\n', i)
      const stop = end < 0 ? sql.length : end
      push('comment', sql.slice(i, stop))
      i = stop
    } else if (c === '/' && next === '*') {
      const end = sql.indexOf('*/', i + 2)
      const stop = end < 0 ? sql.length : end + 2
      push('comment', sql.slice(i, stop))
      i = stop
    } else if (c === '$' && /^\$[A-Za-z_]*\$/.test(sql.slice(i)) && !/[\w$]/.test(sql[i - 1] ?? '')) {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i))![0]
      const end = sql.indexOf(tag, i + tag.length)
      const stop = end < 0 ? sql.length : end + tag.length
      push('string', sql.slice(i, stop))
      i = stop
    } else {
      code += c
      i++
    }
  }
  if (code) out.push({ kind: 'code', text: code })
  return out
}

/** The value of a plain '…' literal (quotes removed, '' undone), or undefined for any other text. */
export function stringValue(text: string): string | undefined {
  const t = text.trim()
  if (t.length < 2 || t[0] !== "'" || t[t.length - 1] !== "'") return undefined
  const inner = t.slice(1, -1)
  if (inner.replaceAll("''", '').includes("'")) return undefined
  return inner.replaceAll("''", "'")
}

/** A '…' SQL literal of `value`. */
export function quoteString(value: string): string {
  return `'${value.replaceAll("'", "''")}'`
}

/**
 * `sql` with the inside of every literal, quoted identifier and comment blanked (same length, line
 * breaks kept): a pattern searched in it matches code only, and an index into it is one into `sql`.
 */
export function maskSql(sql: string): string {
  return splitSql(sql)
    .map(({ kind, text }) => {
      if (kind === 'code') return text
      if (kind === 'comment') return text.replace(/[^\n]/g, ' ')
      // Keep the delimiters, blank what is between them.
      return text.length <= 2 ? text : text[0] + text.slice(1, -1).replace(/[^\n]/g, '_') + text[text.length - 1]
    })
    .join('')
}
