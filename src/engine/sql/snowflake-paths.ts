// Snowflake's path access on semi-structured columns rewritten into DuckDB's JSON operators:
// `col:a.b[0]::string` → `(col->>'$.a.b[0]')`, another cast → `CAST((col->'$.a.b[0]') AS <type>)`,
// no cast → `(col->'$.a.b[0]')` (JSON, as Snowflake's VARIANT). Only code is touched (never text in
// literals or comments), and never inside [...] or {...}, where `a:b` is DuckDB's slice or struct key.
import { maskSql } from './sql-text.js'

const IDENT = String.raw`(?:[A-Za-z_][\w$]*|"_*")`
const LEFT = new RegExp(String.raw`(?<![\w$."])(${IDENT}(?:\s*\.\s*${IDENT})*)\s*:(?=\s*[A-Za-z_"])`, 'g')
const SEGMENT = /^\s*(?:\.\s*([A-Za-z_][\w$]*)|\.\s*("_*")|\[\s*(\d+)\s*\]|\[\s*('_*')\s*\])/
const FIRST = /^\s*(?:([A-Za-z_][\w$]*)|("_*"))/
const CAST = /^\s*::\s*([A-Za-z_]\w*(?:\s*\(\s*\d+\s*(?:,\s*\d+\s*)?\))?)/

/** Snowflake type words → DuckDB types (NUMBER without a scale is an integer in Snowflake). */
const TYPES: Record<string, string> = {
  number: 'DECIMAL(38,0)',
  numeric: 'DECIMAL(38,0)',
  decimal: 'DECIMAL(38,0)',
  int: 'BIGINT',
  integer: 'BIGINT',
  bigint: 'BIGINT',
  smallint: 'BIGINT',
  float: 'DOUBLE',
  double: 'DOUBLE',
  real: 'DOUBLE',
  boolean: 'BOOLEAN',
  timestamp: 'TIMESTAMP',
  timestamp_ntz: 'TIMESTAMP',
  timestamp_tz: 'TIMESTAMPTZ',
  timestamp_ltz: 'TIMESTAMPTZ',
  date: 'DATE',
}
const STRING_TYPES = new Set(['string', 'varchar', 'text', 'char'])
const JSON_TYPES = new Set(['variant', 'object', 'array'])

const jsonKey = (key: string) => (/^[A-Za-z_]\w*$/.test(key) ? `.${key}` : `."${key.replaceAll('"', '\\"')}"`)

/** `sql` with every Snowflake path access rewritten (see the header). */
export function rewriteSnowflakePaths(sql: string): string {
  const masked = maskSql(sql)
  let out = ''
  let last = 0
  // The open brackets before the current match, maintained as the scan moves forward.
  const stack: string[] = []
  let scanned = 0
  const advance = (to: number) => {
    for (; scanned < to; scanned++) {
      const c = masked[scanned]!
      if (c === '(' || c === '[' || c === '{') stack.push(c)
      else if (c === ')' || c === ']' || c === '}') stack.pop()
    }
  }
  LEFT.lastIndex = 0
  for (let m = LEFT.exec(masked); m; m = LEFT.exec(masked)) {
    advance(m.index)
    const inner = stack[stack.length - 1]
    if (inner === '[' || inner === '{') continue
    let at = m.index + m[0].length
    const first = FIRST.exec(masked.slice(at))
    if (!first) continue
    const take = (g: string | undefined, len: number, start: number) =>
      g?.startsWith('"')
        ? sql
            .slice(start, start + len)
            .trim()
            .slice(1, -1)
            .replaceAll('""', '"')
        : (g ?? '')
    let path = '$'
    const firstStart = at + first[0].length - (first[1] ?? first[2] ?? '').length
    path += jsonKey(take(first[1] ?? first[2], (first[1] ?? first[2] ?? '').length, firstStart))
    at += first[0].length
    for (let seg = SEGMENT.exec(masked.slice(at)); seg; seg = SEGMENT.exec(masked.slice(at))) {
      const text = sql.slice(at, at + seg[0].length)
      if (seg[1]) path += jsonKey(seg[1])
      else if (seg[2]) path += jsonKey(/"(.*)"/s.exec(text)![1]!.replaceAll('""', '"'))
      else if (seg[3]) path += `[${seg[3]}]`
      else path += jsonKey(/'(.*)'/s.exec(text)![1]!.replaceAll("''", "'"))
      at += seg[0].length
    }
    const left = sql.slice(m.index, m.index + m[1]!.length)
    const cast = CAST.exec(masked.slice(at))
    const quotedPath = `'${path.replaceAll("'", "''")}'`
    let replacement: string
    if (!cast) replacement = `(${left}->${quotedPath})`
    else {
      const word = cast[1]!.replace(/\s*\(.*$/s, '').toLowerCase()
      at += cast[0].length
      if (STRING_TYPES.has(word)) replacement = `(${left}->>${quotedPath})`
      else if (JSON_TYPES.has(word)) replacement = `(${left}->${quotedPath})`
      else {
        const type = cast[1]!.includes('(') ? cast[1]!.replace(/^number/i, 'DECIMAL') : (TYPES[word] ?? cast[1]!)
        replacement = `CAST((${left}->${quotedPath}) AS ${type})`
      }
    }
    const lines = (sql.slice(m.index, at).match(/\n/g) ?? []).join('')
    out += sql.slice(last, m.index) + replacement + lines
    last = at
    advance(at)
    LEFT.lastIndex = at
  }
  return out + sql.slice(last)
}
