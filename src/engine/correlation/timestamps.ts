// Signal timestamps of correlation tests: integer minutes on an arbitrary origin, or RFC 3339
// strings. Each test uses one kind and is evaluated in that kind's own exact integer unit
// (minutes, or milliseconds since the epoch), so boundaries like "exactly W" compare exactly.

export type TimeKind = 'minutes' | 'rfc3339'

/** How many units of a kind make one minute (windows are given in minutes). */
export const UNITS_PER_MINUTE: Record<TimeKind, number> = { minutes: 1, rfc3339: 60_000 }

/** Integer minutes beyond this are refused: adding windows to them must stay exact. */
const MAX_ABS_MINUTES = 1e12

export type ParsedTime = { kind: TimeKind; value: number } | { error: string }

export function parseTimestamp(raw: unknown): ParsedTime {
  if (typeof raw === 'number') {
    if (!Number.isInteger(raw)) return { error: `${raw} is not an integer number of minutes` }
    if (Math.abs(raw) > MAX_ABS_MINUTES)
      return { error: `${raw} minutes is out of range (at most ±${MAX_ABS_MINUTES})` }
    return { kind: 'minutes', value: raw }
  }
  if (typeof raw === 'string') {
    const ms = parseRfc3339(raw)
    return ms === undefined
      ? { error: `${JSON.stringify(raw)} is neither an integer number of minutes nor an RFC 3339 timestamp` }
      : { kind: 'rfc3339', value: ms }
  }
  return {
    error: `${JSON.stringify(raw) ?? String(raw)} is not a timestamp (an integer number of minutes or an RFC 3339 string)`,
  }
}

/** Milliseconds since the epoch; digits past the millisecond are dropped. undefined = invalid. */
export function parseRfc3339(text: string): number | undefined {
  // A hand-written scanner: tests may carry thousands of timestamps, and a regex with eleven
  // groups costs several times Date.parse. Layout: YYYY-MM-DD[Tt ]hh:mm:ss[.frac](Z|z|±hh:mm).
  const n = text.length
  if (n < 20) return undefined
  const year = digits(text, 0, 4)
  const month = digits(text, 5, 2)
  const day = digits(text, 8, 2)
  const hour = digits(text, 11, 2)
  const minute = digits(text, 14, 2)
  const second = digits(text, 17, 2)
  const sep = text.charCodeAt(10)
  if (
    year < 0 ||
    month < 0 ||
    day < 0 ||
    hour < 0 ||
    minute < 0 ||
    second < 0 ||
    text.charCodeAt(4) !== DASH ||
    text.charCodeAt(7) !== DASH ||
    (sep !== 0x54 && sep !== 0x74 && sep !== 0x20) ||
    text.charCodeAt(13) !== COLON ||
    text.charCodeAt(16) !== COLON
  ) {
    return undefined
  }
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined
  // Second 60 is a leap second; like most systems it reads as the first second of the next minute.
  if (hour > 23 || minute > 59 || second > 60) return undefined
  let i = 19
  let millis = 0
  if (text.charCodeAt(i) === DOT) {
    const begin = ++i
    while (i < n && isDigit(text.charCodeAt(i))) {
      if (i - begin < 3) millis = millis * 10 + (text.charCodeAt(i) - ZERO)
      i++
    }
    if (i === begin) return undefined
    for (let k = i - begin; k < 3; k++) millis *= 10
  }
  let offsetMinutes = 0
  const zone = text.charCodeAt(i)
  if (zone === 0x5a || zone === 0x7a) {
    if (i + 1 !== n) return undefined
  } else if (zone === 0x2b || zone === DASH) {
    const oh = digits(text, i + 1, 2)
    const om = digits(text, i + 4, 2)
    if (i + 6 !== n || oh < 0 || om < 0 || text.charCodeAt(i + 3) !== COLON || oh > 23 || om > 59) return undefined
    offsetMinutes = (zone === DASH ? -1 : 1) * (oh * 60 + om)
  } else {
    return undefined
  }
  const days = daysFromCivil(year, month, day)
  return (((days * 24 + hour) * 60 + minute - offsetMinutes) * 60 + second) * 1000 + millis
}

const ZERO = 0x30
const DASH = 0x2d
const COLON = 0x3a
const DOT = 0x2e

function isDigit(code: number): boolean {
  return code >= ZERO && code <= ZERO + 9
}

/** The number written by `count` ASCII digits at `at`, or -1. */
function digits(text: string, at: number, count: number): number {
  let value = 0
  for (let i = at; i < at + count; i++) {
    const code = text.charCodeAt(i)
    if (!isDigit(code)) return -1
    value = value * 10 + (code - ZERO)
  }
  return value
}

function isLeapYear(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0
}

function daysInMonth(y: number, m: number): number {
  return m === 2 ? (isLeapYear(y) ? 29 : 28) : m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31
}

/** Days since 1970-01-01 of a proleptic Gregorian date (no Date: it maps years 0–99 to 19xx). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y
  const era = Math.floor(yy / 400)
  const yoe = yy - era * 400
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
}
