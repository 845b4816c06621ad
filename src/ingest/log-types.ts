// The log-type registry: every log type rulekeeper can ingest, store and detect on, one entry
// each (`Editor.Audit` is the first and only). Ingest opens a log source on an entry, config checks
// a source's `logType` against the names, and the API lists them (GET /log-types).
import { editorAuditLogType } from './editor-audit-log-type.js'
import type { LogType, LogTypeField } from './log-type.js'

const LOG_TYPES: ReadonlyMap<string, LogType> = new Map([[editorAuditLogType.name, editorAuditLogType]])

/** The entry of a log type, or undefined for a name the registry does not hold. */
export function findLogType(name: string): LogType | undefined {
  return LOG_TYPES.get(name)
}

/** Every registered log type's name, in registry order. */
export function logTypeNames(): string[] {
  return [...LOG_TYPES.keys()]
}

/** What GET /log-types serves: each log type, its qualified table, and its fields (schema, then p_*). */
export function listLogTypes(): Array<{ name: string; table: string; fields: LogTypeField[] }> {
  return [...LOG_TYPES.values()].map((lt) => ({
    name: lt.name,
    table: lt.qualifiedTable,
    fields: [...lt.recordFields, ...lt.standardFields].map((f) => ({ ...f })),
  }))
}
