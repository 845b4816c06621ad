// Signal timestamps of correlation tests: integer minutes on an arbitrary origin, or RFC 3339
// strings. Each test uses one kind and is evaluated in that kind's own exact integer unit
// (minutes, or milliseconds since the epoch), so boundaries like "exactly W" compare exactly.

export type TimeKind = 'minutes' | 'rfc3339'

/** How many units of a kind make one minute (windows are given in minutes). */
export const UNITS_PER_MINUTE: Record<TimeKind, number> = { minutes: 1, rfc3339: 60_000 }

/** Integer minutes beyond this are refused: adding windows to them must stay exact. */
export const MAX_ABS_MINUTES = 1e12

export type ParsedTime = { kind: TimeKind; value: number } | { error: string }

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/

export function parseTimestamp(raw: unknown): ParsedTime {
  if (typeof raw === 'number') {
    if (!Number.isInteger(raw)) return { error: `${raw} is not an integer number of minutes` }
    if (Math.abs(raw) > MAX_ABS_MINUTES) return { error: `${raw} minutes is out of range (at most ±${MAX_ABS_MINUTES})` }
    return { kind: 'minutes', value: raw }
  }
  if (typeof raw === 'string') {
    const ms = parseRfc3339(raw)
    return ms === undefined
      ? { error: `${JSON.stringify(raw)} is neither an integer number of minutes nor an RFC 3339 timestamp` }
      : { kind: 'rfc3339', value: ms }
  }
  return { error: `${JSON.stringify(raw) ?? String(raw)} is not a timestamp (an integer number of minutes or an RFC 3339 string)` }
}

/** Milliseconds since the epoch; digits past the millisecond are dropped. undefined = invalid. */
export function parseRfc3339(text: string): number | undefined {
  const m = RFC3339.exec(text)
  if (m === null) return undefined
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [
    number, number, number, number, number, number,
  ]
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined
  // Second 60 is a leap second; like most systems it reads as the first second of the next minute.
  if (hour > 23 || minute > 59 || second > 60) return undefined
  const millis = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'))
  let offsetMinutes = 0
  if (m[8] === undefined) {
    const oh = Number(m[10])
    const om = Number(m[11])
    if (oh > 23 || om > 59) return undefined
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (oh * 60 + om)
  }
  const days = daysFromCivil(year, month, day)
  return (((days * 24 + hour) * 60 + minute - offsetMinutes) * 60 + second) * 1000 + millis
}

function isLeapYear(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0
}

function daysInMonth(y: number, m: number): number {
  return m === 2 ? (isLeapYear(y) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31
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
