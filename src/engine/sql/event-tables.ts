// The event tables as Panther names them: one view per log type of the registry,
// `panther_logs.public.<table>` and the same name unqualified, over the log type's stored
// Hive-partitioned NDJSON (`<logs>/<Log.Type>/dt=YYYY-MM-DD/hour=HH/*.ndjson`). Columns come from the
// log type's fields: top-level objects are JSON (Snowflake's VARIANT), p_event_time and p_parse_time
// TIMESTAMP (UTC), and the partitions are p_date (DATE) and p_hour (INTEGER), which prune files.
import path from 'node:path'
import type { LogType, LogTypeField } from '../../ingest/log-type.js'
import { PANTHER_LOGS } from '../../ingest/log-type.js'
import { quoteString } from './sql-text.js'

const TIMESTAMP_FIELDS = new Set(['p_event_time', 'p_parse_time'])

/** The DuckDB type of a top-level field (nested fields live inside their object's JSON). */
export function columnType(field: LogTypeField): string {
  if (TIMESTAMP_FIELDS.has(field.name)) return 'TIMESTAMP'
  switch (field.type) {
    case 'string':
      return 'VARCHAR'
    case 'boolean':
      return 'BOOLEAN'
    case 'list of strings':
      return 'VARCHAR[]'
    default:
      // Objects, and integers that may arrive as decimal strings: JSON keeps them as sent.
      return 'JSON'
  }
}

/** The columns of a log type's table in order: the schema's top-level fields, then the p_* fields. */
export function tableColumns(logType: LogType): Array<{ name: string; type: string }> {
  return [...logType.recordFields, ...logType.standardFields]
    .filter((f) => !f.name.includes('.'))
    .map((f) => ({ name: f.name, type: columnType(f) }))
}

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`

/** The folder a log type's events are stored under (the one folder a query may read for it). */
export function logTypeDir(logsRoot: string, logType: LogType): string {
  return path.join(logsRoot, logType.name)
}

/**
 * The SELECT a log type's view runs: read_json over its stored files with the columns given (no
 * sampling, so every file reads alike), or, while nothing is stored yet, no rows of the same shape
 * (read_json refuses a pattern that matches no file).
 */
export function tableSelect(logsRoot: string, logType: LogType, hasFiles: boolean): string {
  const cols = tableColumns(logType)
  if (!hasFiles)
    return `SELECT ${[
      ...cols.map((c) => `CAST(NULL AS ${c.type}) AS ${ident(c.name)}`),
      'CAST(NULL AS DATE) AS p_date',
      'CAST(NULL AS INTEGER) AS p_hour',
    ].join(', ')} WHERE false`
  const pattern = path.join(logTypeDir(logsRoot, logType), 'dt=*', 'hour=*', '*.ndjson')
  const columns = `{${cols.map((c) => `${quoteString(c.name)}: ${quoteString(c.type)}`).join(', ')}}`
  return (
    `SELECT * EXCLUDE (dt, hour), dt AS p_date, hour AS p_hour FROM read_json(${quoteString(pattern)}, ` +
    `format = 'newline_delimited', hive_partitioning = true, hive_types = {'dt': 'DATE', 'hour': 'INTEGER'}, ` +
    `columns = ${columns})`
  )
}

/** The statements that (re)create a log type's two views. */
export function tableViews(logsRoot: string, logType: LogType, hasFiles: boolean): string[] {
  const qualified = `${PANTHER_LOGS}.${ident(logType.table)}`
  return [
    `CREATE OR REPLACE VIEW ${qualified} AS ${tableSelect(logsRoot, logType, hasFiles)}`,
    `CREATE OR REPLACE VIEW main.${ident(logType.table)} AS SELECT * FROM ${qualified}`,
  ]
}
