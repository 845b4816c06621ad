// What a log type is, for everything that stores, reads or queries records: its name, its table as
// Panther names it, its schema and fields, how a record is checked and given its standard p_*
// fields, and where its event time comes from. Imports nothing, so detection can read the stored
// line's shape (STORED_TAIL_FIELDS) without loading any schema. The entries: log-types.ts.

/** One field of a log type as the API lists it (GET /log-types): a dotted path into the record. */
export interface LogTypeField {
  name: string
  /** string, boolean, integer, list of strings, object. */
  type: string
  required: boolean
  description: string
}

/** What normalize adds besides the record itself: the standard fields that are not in it. */
export interface StandardFieldContext {
  sourceId: string
  parseTime: string
  rowId: string
}

export type RecordVerdict =
  | {
      ok: true
      /** The record with its standard fields added last, in the log type's `standardFields` order. */
      stored: Record<string, unknown>
      eventMs: number
      /** p_event_time: the event time in UTC, `YYYY-MM-DDTHH:MM:SS.sssZ`. */
      eventTime: string
      /** The id duplicates are recognised by, when the record has one. */
      id: string | undefined
      unknownKind: boolean
    }
  | { ok: false; reason: string }

export interface LogType {
  /** `Vendor.Name`: p_log_type, a rule's LogTypes entry, the data folder under `logs/`. */
  name: string
  /** Panther's table name: tableName(name). */
  table: string
  /** The table in Panther's log database: `panther_logs.public.<table>`. */
  qualifiedTable: string
  /** The JSON Schema records are checked against (ajv). */
  schema: Readonly<Record<string, unknown>>
  /** The schema's fields (dotted paths, objects included), in the schema's order. */
  recordFields: readonly LogTypeField[]
  /** The p_* fields every stored record gets, in the order they end its line. */
  standardFields: readonly LogTypeField[]
  /** The record field p_event_time is read from (dotted path). */
  eventTimeField: string
  /** Checks one parsed record and, when it is accepted, adds the standard fields to it in place. */
  normalize(value: unknown, ctx: StandardFieldContext): RecordVerdict
}

/**
 * The standard fields every stored line starts its p_* tail with, in this order: detection reads
 * them back from the end of the line without parsing the record (detect/stored-log.ts).
 */
export const STORED_TAIL_FIELDS = ['p_log_type', 'p_event_time', 'p_parse_time', 'p_row_id'] as const

/** Panther's database and schema of the log tables. */
export const PANTHER_LOGS = 'panther_logs.public'

/** The table of a log type as Panther names it: dots become underscores, all lower case. */
export function tableName(logType: string): string {
  return logType.replaceAll('.', '_').toLowerCase()
}

/**
 * The line stored for an accepted record: the record serialized, the standard fields last in the
 * order normalize adds them, which detection reads back from the end of the line
 * (detect/stored-log.ts). Not the NDJSON text as sent with the fields appended: that text can
 * read differently elsewhere — a carriage return between tokens is a line break to node:readline
 * (the duplicate filter's rebuild at start-up would lose the record's id), a key given twice makes
 * DuckDB's read_json refuse the whole file (JSON.parse keeps the last), a number out of double
 * range reads as Infinity where the serialized record holds null — and checking for those cost more
 * than serializing (3.5 µs vs 2.4 µs a record; docs/decisions.md).
 */
export function storedLine(verdict: Extract<RecordVerdict, { ok: true }>): string {
  return JSON.stringify(verdict.stored)
}
