// What a scheduled correlation run reads from storage: the stored matches and signals of the rules
// its steps reference whose event time lies in [from, to) (committed lines only), each with the
// fields a join can read — the match's alertContext as `p_alert_context` and, read at the match's
// partition and offset, its record's fields — and which signals the correlation rule has already
// counted there (its own match lines), so that no run counts a signal twice, even after a restart.
import type { MatchReader } from './detection-ledger.js'
import { readStoredLines } from './stored-log.js'

export interface StoredSignal {
  /** The member rule's match id (unique per rule and stored line). */
  id: string
  ruleId: string
  eventMs: number
  eventTime: string
  logType: string
  record: { partition: string; offset: number }
  /** The record's fields (when read) with `p_alert_context`: what join fields and summaries see. */
  view: Record<string, unknown>
}

export interface CorrelationWindow {
  signals: StoredSignal[]
  /** `${dedup}\u0000${signal id}` of every signal the correlation rule counted in the window. */
  counted: Set<string>
}

export const countedKey = (dedup: string, signalId: string) => `${dedup}\u0000${signalId}`

const isRef = (v: unknown): v is { partition: string; offset: number } =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as { partition?: unknown }).partition === 'string' &&
  Number.isSafeInteger((v as { offset?: unknown }).offset)

export async function readCorrelationWindow(o: {
  store: MatchReader
  logsRoot: string
  ruleId: string
  members: ReadonlySet<string>
  fromMs: number
  toMs: number
  /** Read each signal's record (a join field or a SummaryAttribute outside p_alert_context). */
  withRecords: boolean
}): Promise<CorrelationWindow> {
  const signals: StoredSignal[] = []
  const counted = new Set<string>()
  // Match lines are written by JSON.stringify with `id` then `ruleId` first: a line of another rule
  // is dropped by its text, unparsed (the parsed check below still decides).
  const needles = [o.ruleId, ...o.members].map((id) => `"ruleId":${JSON.stringify(id)},`)
  const lines = await o.store.readMatches(
    o.fromMs,
    o.toMs - 1,
    (m) => {
      if (m.ruleId !== o.ruleId && !o.members.has(m.ruleId as string)) return false
      const ms = Date.parse(String(m.eventTime))
      return ms >= o.fromMs && ms < o.toMs
    },
    (line) => needles.some((n) => line.includes(n)),
  )
  for (const m of lines) {
    if (m.ruleId === o.ruleId) {
      if (typeof m.signalId === 'string') counted.add(countedKey(String(m.dedup), m.signalId))
      continue
    }
    if (typeof m.id !== 'string' || !isRef(m.record)) continue
    const context = typeof m.alertContext === 'object' && m.alertContext !== null ? m.alertContext : {}
    signals.push({
      id: m.id,
      ruleId: String(m.ruleId),
      eventMs: Date.parse(String(m.eventTime)),
      eventTime: String(m.eventTime),
      logType: String(m.logType ?? ''),
      record: { partition: m.record.partition, offset: m.record.offset },
      view: { p_alert_context: context },
    })
  }
  if (o.withRecords) {
    // One open per data file (readStoredLines), not one per signal; a file that cannot be read
    // leaves its signals with their alert context only, as before.
    const byPartition = new Map<string, StoredSignal[]>()
    for (const s of signals) {
      const list = byPartition.get(s.record.partition)
      if (list) list.push(s)
      else byPartition.set(s.record.partition, [s])
    }
    for (const list of byPartition.values()) {
      list.sort((a, b) => a.record.offset - b.record.offset)
      const records = await readStoredLines(
        o.logsRoot,
        list.map((s) => s.record),
      ).catch(() => list.map(() => null))
      list.forEach((s, i) => {
        const record = records[i]
        if (typeof record === 'object' && record !== null && !Array.isArray(record))
          s.view = { ...(record as Record<string, unknown>), p_alert_context: s.view.p_alert_context }
      })
    }
  }
  // The stored order of the log (partition, then offset) within equal event times: one fixed order.
  signals.sort(
    (a, b) =>
      a.eventMs - b.eventMs ||
      (a.record.partition < b.record.partition ? -1 : a.record.partition > b.record.partition ? 1 : 0) ||
      a.record.offset - b.record.offset ||
      (a.ruleId < b.ruleId ? -1 : a.ruleId > b.ruleId ? 1 : 0),
  )
  return { signals, counted }
}

/** The value at a join field: the key itself when the view has it, else a dotted path. */
export function fieldValue(view: Record<string, unknown>, field: string): unknown {
  if (Object.hasOwn(view, field)) return view[field]
  let v: unknown = view
  for (const part of field.split('.')) {
    if (typeof v !== 'object' || v === null || !Object.hasOwn(v, part)) return undefined
    v = (v as Record<string, unknown>)[part]
  }
  return v
}

/** A join value compared as a string: strings as they are, other values as JSON; null = none. */
function asString(v: unknown): string | null {
  if (v === undefined || v === null) return null
  return typeof v === 'string' ? v : JSON.stringify(v)
}

/**
 * A signal's join value for a step joining on `fields`: the value as a string (one field) or the
 * JSON array of the values (several, in the step's order); null when a field is missing.
 */
export function joinValue(view: Record<string, unknown>, fields: readonly string[]): string | null {
  const values: string[] = []
  for (const f of fields) {
    const v = asString(fieldValue(view, f))
    if (v === null) return null
    values.push(v)
  }
  return values.length === 1 ? values[0]! : JSON.stringify(values)
}
