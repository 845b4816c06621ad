// The signals table as Panther names it, `panther_signals.public.correlation_signals` (and
// `correlation_signals`): one row per committed match or signal line of detection
// (`<detections>/matches/dt=YYYY-MM-DD/hour=HH/*.ndjson`). Only committed bytes are read: each file
// is cut at the checkpoint's length for it (a commit under way appends past it), so the view is
// remade whenever the committed lengths move. One branch per event day, its date a constant, so a
// filter on p_date/p_hour (the time macros add one) drops the other days' files unread.
import path from 'node:path'
import { quoteString } from './sql-text.js'

export const PANTHER_SIGNALS = 'panther_signals.public'
export const SIGNALS_TABLE = 'correlation_signals'

/** A match file's path relative to the detections folder (`matches/dt=…/hour=…/x.ndjson`) → committed length. */
export type CommittedOutputs = Readonly<Record<string, number>>

/** The columns: Panther's names where it has them, then ours, then the partitions. */
const COLUMNS: ReadonlyArray<{ name: string; type: string; expr: string }> = [
  { name: 'p_rule_id', type: 'VARCHAR', expr: 'j.ruleId' },
  { name: 'p_alert_id', type: 'VARCHAR', expr: 'j.alertId' },
  { name: 'p_alert_severity', type: 'VARCHAR', expr: 'j.severity' },
  { name: 'p_alert_context', type: 'JSON', expr: 'j.alertContext' },
  { name: 'p_event_time', type: 'TIMESTAMP', expr: 'CAST(j.eventTime AS TIMESTAMP)' },
  { name: 'p_log_type', type: 'VARCHAR', expr: 'j.logType' },
  { name: 'id', type: 'VARCHAR', expr: 'j.id' },
  { name: 'rule_kind', type: 'VARCHAR', expr: 'j.ruleKind' },
  { name: 'revision', type: 'VARCHAR', expr: 'j.revision' },
  { name: 'dedup', type: 'VARCHAR', expr: 'j.dedup' },
  { name: 'title', type: 'VARCHAR', expr: 'j.title' },
  { name: 'signal', type: 'BOOLEAN', expr: 'j.signal' },
  { name: 'alert_limited', type: 'BOOLEAN', expr: 'coalesce(j.alertLimited, false)' },
  { name: 'record_partition', type: 'VARCHAR', expr: 'j.record.partition' },
  { name: 'record_offset', type: 'BIGINT', expr: 'j.record.offset' },
  { name: 'signal_id', type: 'VARCHAR', expr: 'j.signalId' },
  { name: 'query', type: 'VARCHAR', expr: 'j.query' },
  { name: 'event', type: 'JSON', expr: 'j.event' },
]

/** The shape a match line is parsed into (from_json). */
const LINE_SHAPE = JSON.stringify({
  id: 'VARCHAR',
  ruleId: 'VARCHAR',
  ruleKind: 'VARCHAR',
  revision: 'VARCHAR',
  logType: 'VARCHAR',
  eventTime: 'VARCHAR',
  record: { partition: 'VARCHAR', offset: 'BIGINT' },
  query: 'VARCHAR',
  event: 'JSON',
  dedup: 'VARCHAR',
  title: 'VARCHAR',
  severity: 'VARCHAR',
  signal: 'BOOLEAN',
  alertId: 'VARCHAR',
  alertContext: 'JSON',
  alertLimited: 'BOOLEAN',
  signalId: 'VARCHAR',
})

/** The table's columns in order (docs/queries.md lists them). */
export function signalColumns(): Array<{ name: string; type: string }> {
  return [
    ...COLUMNS.map(({ name, type }) => ({ name, type })),
    { name: 'p_date', type: 'DATE' },
    { name: 'p_hour', type: 'INTEGER' },
  ]
}

const PARTITION = /^matches\/dt=(\d{4}-\d\d-\d\d)\/hour=(\d\d)\/[^/]+\.ndjson$/

/** The committed match files by event day: absolute path, hour, committed length. */
function filesByDay(detectionsRoot: string, outputs: CommittedOutputs) {
  const days = new Map<string, Array<{ file: string; hour: number; length: number }>>()
  for (const [rel, length] of Object.entries(outputs)) {
    const m = PARTITION.exec(rel.split(path.sep).join('/'))
    if (!m || !(length > 0)) continue
    const list = days.get(m[1]!) ?? []
    list.push({ file: path.join(detectionsRoot, rel), hour: Number(m[2]), length })
    days.set(m[1]!, list)
  }
  return [...days.entries()].sort(([a], [b]) => a.localeCompare(b))
}

/**
 * The SELECT the view runs: per event day, its files read whole (read_blob) and cut at their
 * committed lengths (whole lines), split into lines, each parsed; no rows of the same shape while
 * nothing is committed.
 */
export function signalsSelect(detectionsRoot: string, outputs: CommittedOutputs): string {
  const days = filesByDay(detectionsRoot, outputs)
  if (days.length === 0)
    return `SELECT ${signalColumns()
      .map((c) => `CAST(NULL AS ${c.type}) AS ${c.name}`)
      .join(', ')} WHERE false`
  const branches = days.map(([day, files]) => {
    // Each file's hour and length by its name (a CASE: a join would hold a hash table per day).
    const byFile = (pick: (f: (typeof files)[number]) => number) =>
      `CASE filename ${files.map((f) => `WHEN ${quoteString(f.file)} THEN ${pick(f)}`).join(' ')} END`
    const list = `[${files.map((f) => quoteString(f.file)).join(', ')}]`
    return (
      `SELECT DATE '${day}' AS p_date, ${byFile((f) => f.hour)} AS p_hour, ` +
      `unnest(string_split(decode(content[1:${byFile((f) => f.length)}]), chr(10))) AS line FROM read_blob(${list})`
    )
  })
  // A balanced tree of UNION ALL: its depth grows with the log of the days, not with them.
  const tree = (lo: number, hi: number): string =>
    hi - lo === 1
      ? branches[lo]!
      : `SELECT * FROM (${tree(lo, (lo + hi) >> 1)}) UNION ALL SELECT * FROM (${tree((lo + hi) >> 1, hi)})`
  return (
    `SELECT ${COLUMNS.map((c) => `CAST(${c.expr} AS ${c.type}) AS ${c.name}`).join(', ')}, p_date, p_hour ` +
    `FROM (SELECT p_date, p_hour, from_json(line, ${quoteString(LINE_SHAPE)}) AS j ` +
    `FROM (${tree(0, branches.length)}) WHERE line <> '')`
  )
}

/** The statements that (re)create the two views. */
export function signalViews(detectionsRoot: string, outputs: CommittedOutputs): string[] {
  const qualified = `${PANTHER_SIGNALS}.${SIGNALS_TABLE}`
  return [
    `CREATE OR REPLACE VIEW ${qualified} AS ${signalsSelect(detectionsRoot, outputs)}`,
    `CREATE OR REPLACE VIEW main.${SIGNALS_TABLE} AS SELECT * FROM ${qualified}`,
  ]
}

/** A key that changes when the committed match files or their lengths do. */
export function committedKey(outputs: CommittedOutputs): string {
  return Object.entries(outputs)
    .filter(([rel]) => rel.startsWith('matches'))
    .map(([rel, n]) => `${rel}\u0000${n}`)
    .sort()
    .join('\u0001')
}
