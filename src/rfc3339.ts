// RFC 3339 times that name a real calendar instant: 2026-02-30 or 24:00 is refused, not read as a
// day later as Date.parse would. `POST /replay` and `rulekeeper replay` read their range with it.
const RFC3339 = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.\d+)?(?:Z|[+-](\d\d):(\d\d))$/i

/** Milliseconds of an RFC 3339 time, or undefined (a day or hour that does not exist included). */
export function rfc3339Ms(v: unknown): number | undefined {
  const m = typeof v === 'string' ? RFC3339.exec(v) : null
  if (!m) return undefined
  const [year, month, day, hour, minute, second, offH, offM] = m.slice(1).map((x) => Number(x ?? 0))
  const days = new Date(Date.UTC(year!, month!, 0)).getUTCDate() // the last day of that month
  if (month! < 1 || month! > 12 || day! < 1 || day! > days || hour! > 23 || minute! > 59 || second! > 59)
    return undefined
  if (offH! > 23 || offM! > 59) return undefined
  const ms = Date.parse(v as string)
  return Number.isNaN(ms) ? undefined : ms
}
