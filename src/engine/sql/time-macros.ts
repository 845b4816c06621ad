// Panther's time macros expanded before DuckDB sees the SQL: p_occurs_since, p_occurs_between,
// p_occurs_around, p_occurs_after, p_occurs_before, each with an optional table alias and column.
// A literal time becomes a TIMESTAMP literal (UTC) plus a filter on the hour partitions (p_date,
// p_hour), which DuckDB prunes files with; docs/queries.md gives the exact expansions.
import { badRequest } from '../../errors.js'
import { maskSql, stringValue } from './sql-text.js'

const UNIT_SECONDS: Record<string, number> = {}
for (const [secs, names] of [
  [1, ['s', 'sec', 'secs', 'second', 'seconds']],
  [60, ['m', 'min', 'mins', 'minute', 'minutes']],
  [3600, ['h', 'hr', 'hrs', 'hour', 'hours']],
  [86_400, ['d', 'day', 'days']],
  [604_800, ['w', 'wk', 'wks', 'week', 'weeks']],
] as const)
  for (const n of names) UNIT_SECONDS[n] = secs

const MACROS = ['p_occurs_since', 'p_occurs_between', 'p_occurs_around', 'p_occurs_after', 'p_occurs_before'] as const
type MacroName = (typeof MACROS)[number]
/** How many leading arguments are times/offsets (the alias and column follow). */
const ARITY: Record<MacroName, number> = {
  p_occurs_since: 1,
  p_occurs_between: 2,
  p_occurs_around: 2,
  p_occurs_after: 1,
  p_occurs_before: 1,
}

/** An offset as Panther reads it: seconds as a number, or `N unit` (`'1 hour'`, `'6 d'`, `'90s'`). */
export function offsetSeconds(arg: string): number {
  const literal = stringValue(arg)
  const text = (literal ?? arg).trim()
  const m = /^(\d+)\s*([A-Za-z]*)$/.exec(text)
  const secs = m ? (m[2] === '' ? 1 : UNIT_SECONDS[m[2]!.toLowerCase()]) : undefined
  if (!m || secs === undefined)
    throw badRequest(`cannot read the time offset ${arg.trim()}: use seconds or N s|m|h|d|w (e.g. '1 hour')`)
  return Number(m[1]) * secs
}

/** A time literal's instant (no zone given means UTC, as Panther assumes), or undefined for an expression. */
export function literalTime(arg: string): number | undefined {
  const literal = stringValue(arg)
  if (literal === undefined) return undefined
  let t = literal.trim().replace(' ', 'T')
  if (/^\d{4}-\d{2}-\d{2}$/.test(t)) t += 'T00:00:00'
  if (!/(Z|[+-]\d{2}:?\d{2})$/i.test(t)) t += 'Z'
  const ms = Date.parse(t)
  if (Number.isNaN(ms))
    throw badRequest(`cannot read the time ${literal}: use an RFC 3339 or 'YYYY-MM-DD HH:MM:SS' time (UTC)`)
  return ms
}

const iso = (ms: number) => new Date(ms).toISOString()
const tsLiteral = (ms: number) => `TIMESTAMP '${iso(ms).slice(0, 23).replace('T', ' ')}'`

/** A bound: a literal instant (prunable) or an SQL expression. */
type Bound = { ms: number } | { sql: string }

function boundOf(arg: string): Bound {
  const ms = literalTime(arg)
  return ms === undefined ? { sql: `CAST((${arg.trim()}) AS TIMESTAMP)` } : { ms }
}

function partitionFilter(prefix: string, ms: number, op: '>' | '<'): string {
  const day = iso(ms).slice(0, 10)
  const hour = new Date(ms).getUTCHours()
  return `(${prefix}p_date ${op} DATE '${day}' OR (${prefix}p_date = DATE '${day}' AND ${prefix}p_hour ${op}= ${hour}))`
}

function expand(name: MacroName, args: string[], nowMs: number, prune: boolean): string {
  const n = ARITY[name]
  if (args.length < n || args.length > n + 2)
    throw badRequest(`${name} takes ${n} argument${n > 1 ? 's' : ''}, then an optional table alias and column`)
  const alias = args[n]?.trim()
  const column = args[n + 1]?.trim() || 'p_event_time'
  for (const id of [alias, column])
    if (id !== undefined && id !== '' && !/^[A-Za-z_][\w$]*$|^"[^"]+"$/.test(id))
      throw badRequest(`${name}: ${id} is not a table alias or column name`)
  const prefix = alias ? `${alias}.` : ''
  let lo: Bound | undefined
  let hi: Bound | undefined
  switch (name) {
    case 'p_occurs_since':
      lo = { ms: nowMs - offsetSeconds(args[0]!) * 1000 }
      break
    case 'p_occurs_between':
      lo = boundOf(args[0]!)
      hi = boundOf(args[1]!)
      break
    case 'p_occurs_around': {
      const at = boundOf(args[0]!)
      const secs = offsetSeconds(args[1]!)
      if ('ms' in at) {
        lo = { ms: at.ms - secs * 1000 }
        hi = { ms: at.ms + secs * 1000 }
      } else {
        lo = { sql: `(${at.sql} - INTERVAL ${secs} SECOND)` }
        hi = { sql: `(${at.sql} + INTERVAL ${secs} SECOND)` }
      }
      break
    }
    case 'p_occurs_after':
      lo = boundOf(args[0]!)
      break
    case 'p_occurs_before':
      hi = boundOf(args[0]!)
      break
  }
  const col = `${prefix}${column}`
  const parts: string[] = []
  const pruneOn = prune && column.toLowerCase() === 'p_event_time'
  if (lo) parts.push(`${col} >= ${'ms' in lo ? tsLiteral(lo.ms) : lo.sql}`)
  if (hi) parts.push(`${col} <= ${'ms' in hi ? tsLiteral(hi.ms) : hi.sql}`)
  if (pruneOn && lo && 'ms' in lo) parts.push(partitionFilter(prefix, lo.ms, '>'))
  if (pruneOn && hi && 'ms' in hi) parts.push(partitionFilter(prefix, hi.ms, '<'))
  return `(${parts.join(' AND ')})`
}

/** The arguments of the call whose `(` is at `open` in the masked text, and the index past its `)`. */
function callArgs(sql: string, masked: string, open: number): { args: string[]; end: number } {
  let depth = 0
  let start = open + 1
  const args: string[] = []
  for (let i = open; i < masked.length; i++) {
    const c = masked[i]
    if (c === '(' || c === '[' || c === '{') depth++
    else if (c === ')' || c === ']' || c === '}') {
      depth--
      if (depth === 0) {
        args.push(sql.slice(start, i))
        return { args: args.length === 1 && args[0]!.trim() === '' ? [] : args, end: i + 1 }
      }
    } else if (c === ',' && depth === 1) {
      args.push(sql.slice(start, i))
      start = i + 1
    }
  }
  throw badRequest('a time macro is missing its closing parenthesis')
}

/**
 * `sql` with every time macro expanded, relative to `nowMs` (the request's time, or a scheduled
 * run's slot). Line breaks inside a call are kept, so DuckDB's line numbers still match the text
 * sent. `prune: false` leaves out the partition filter (an alias naming a derived table has no
 * p_date/p_hour columns).
 */
export function expandTimeMacros(sql: string, nowMs: number, prune = true): string {
  const masked = maskSql(sql)
  const re = new RegExp(`(?<![\\w$."])(${MACROS.join('|')})\\s*\\(`, 'gi')
  let out = ''
  let last = 0
  for (let m = re.exec(masked); m; m = re.exec(masked)) {
    if (m.index < last) continue
    const name = m[1]!.toLowerCase() as MacroName
    const { args, end } = callArgs(sql, masked, m.index + m[0].length - 1)
    const lines = (sql.slice(m.index, end).match(/\n/g) ?? []).join('')
    out += sql.slice(last, m.index) + expand(name, args, nowMs, prune) + lines
    last = end
    re.lastIndex = end
  }
  return out + sql.slice(last)
}
