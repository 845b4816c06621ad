// DuckDB values → JSON, the same way every time (docs/queries.md lists it): integers as numbers
// while they are exact in a double, else as decimal strings; DECIMAL as a number when it is a whole
// safe integer, else its exact decimal text; times as RFC 3339 UTC; BLOB as base64; STRUCT as an
// object, LIST/ARRAY as an array, MAP as [{key, value}]; a JSON column as the JSON it holds.
import {
  DuckDBArrayValue,
  DuckDBBlobValue,
  DuckDBDateValue,
  DuckDBDecimalValue,
  DuckDBListValue,
  DuckDBMapValue,
  DuckDBStructValue,
  DuckDBTimestampMillisecondsValue,
  DuckDBTimestampNanosecondsValue,
  DuckDBTimestampSecondsValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  DuckDBUnionValue,
  type DuckDBValue,
} from '@duckdb/node-api'

export type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue }

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)

function bigintJson(v: bigint): number | string {
  return v <= MAX_SAFE && v >= -MAX_SAFE ? Number(v) : v.toString()
}

/** Microseconds since the epoch → `YYYY-MM-DDTHH:MM:SS.sssZ` (six fraction digits when they are not zero). */
function microsIso(micros: bigint, finite: boolean, text: string): string {
  if (!finite) return text
  const ms = micros / 1000n - (micros % 1000n < 0n ? 1n : 0n)
  const rest = Number(((micros % 1000n) + 1000n) % 1000n)
  const date = new Date(Number(ms))
  if (Number.isNaN(date.getTime())) return text
  const iso = date.toISOString()
  return rest === 0 ? iso : `${iso.slice(0, -1)}${String(rest).padStart(3, '0')}Z`
}

function doubleJson(v: number): number | string {
  if (Number.isFinite(v)) return v
  return Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity'
}

/** One value as JSON (see the header). */
export function toJson(v: DuckDBValue): JsonValue {
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return v
  if (typeof v === 'number') return doubleJson(v)
  if (typeof v === 'bigint') return bigintJson(v)
  if (v instanceof DuckDBDecimalValue)
    return v.scale === 0 && v.value <= MAX_SAFE && v.value >= -MAX_SAFE ? Number(v.value) : v.toString()
  if (v instanceof DuckDBTimestampValue || v instanceof DuckDBTimestampTZValue)
    return microsIso(v.micros, v.isFinite, v.toString())
  if (v instanceof DuckDBTimestampMillisecondsValue) return microsIso(v.millis * 1000n, v.isFinite, v.toString())
  if (v instanceof DuckDBTimestampSecondsValue) return microsIso(v.seconds * 1_000_000n, v.isFinite, v.toString())
  if (v instanceof DuckDBTimestampNanosecondsValue) return v.toString()
  if (v instanceof DuckDBDateValue) return v.toString()
  if (v instanceof DuckDBBlobValue) return Buffer.from(v.bytes).toString('base64')
  if (v instanceof DuckDBListValue || v instanceof DuckDBArrayValue) return v.items.map(toJson)
  if (v instanceof DuckDBStructValue) {
    const out: Record<string, JsonValue> = {}
    for (const [k, x] of Object.entries(v.entries)) setColumn(out, k, toJson(x))
    return out
  }
  if (v instanceof DuckDBMapValue) return v.entries.map((e) => ({ key: toJson(e.key), value: toJson(e.value) }))
  if (v instanceof DuckDBUnionValue) return toJson(v.value)
  // UUID, TIME, INTERVAL, BIT, and anything newer: DuckDB's own text.
  return String(v)
}

/** A JSON column's value: the JSON it holds (its text when, against expectation, it does not parse). */
export function jsonColumnValue(v: DuckDBValue): JsonValue {
  if (typeof v !== 'string') return toJson(v)
  try {
    return JSON.parse(v) as JsonValue
  } catch {
    return v
  }
}

/** Sets `key` on a row or event built from a query's columns: a column may be named `__proto__`. */
export function setColumn(row: Record<string, JsonValue>, key: string, value: JsonValue): void {
  if (key === '__proto__')
    Object.defineProperty(row, key, { value, enumerable: true, writable: true, configurable: true })
  else row[key] = value
}

/** Characters JSON writes escaped: `"`, `\\` and the control characters. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what JSON escapes
const ESCAPED = /["\\\u0000-\u001f]/

/** The length of a string's JSON text in UTF-8 bytes, quotes and escapes included. */
function stringJsonSize(v: string): number {
  let n = Buffer.byteLength(v) + 2
  if (!ESCAPED.test(v)) return n
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i)
    // `\"`, `\\`, `\n`…: one more byte; other control characters are `\u00XX`: five more.
    if (c === 0x22 || c === 0x5c || c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d) n += 1
    else if (c < 0x20) n += 5
  }
  return n
}

/** The length of a value's JSON text in UTF-8 bytes, without writing the text: what a page's byte limit counts. */
export function jsonSize(v: JsonValue): number {
  if (v === null) return 4
  if (typeof v === 'string') return stringJsonSize(v)
  if (typeof v === 'number' || typeof v === 'boolean') return String(v).length
  // Brackets, and a comma between members.
  let n = 1
  if (Array.isArray(v)) for (const x of v) n += jsonSize(x) + 1
  else for (const [k, x] of Object.entries(v)) n += stringJsonSize(k) + 1 + jsonSize(x) + 1
  return Math.max(n, 2)
}
