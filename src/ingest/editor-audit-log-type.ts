// The `Editor.Audit` entry of the log-type registry: its schema (editor-audit-schema.ts) read into
// a field list, its standard fields with what each means, its event time (`metadata.timestamp`) and
// its normalizer (editor-audit-record.ts). docs/editor-audit-schema.md shows the same fields.
import { isPlainObject } from '../is-plain-object.js'
import { checkEditorAuditRecord } from './editor-audit-record.js'
import { EDITOR_AUDIT, editorAuditSchema } from './editor-audit-schema.js'
import { type LogType, type LogTypeField, PANTHER_LOGS, tableName } from './log-type.js'

/** The type word of a property schema, as the docs page writes it. */
function typeWord(schema: Record<string, unknown>): string {
  if (Array.isArray(schema.anyOf)) return 'integer' // a JSON integer or a decimal string
  if (schema.type === 'array') return 'list of strings'
  return String(schema.type)
}

/** Every property of an object schema by its dotted path, objects before their own fields. */
export function schemaFields(schema: Record<string, unknown>, prefix = ''): LogTypeField[] {
  const required = (schema.required as string[] | undefined) ?? []
  const out: LogTypeField[] = []
  for (const [name, sub] of Object.entries(schema.properties as Record<string, Record<string, unknown>>)) {
    const at = `${prefix}${name}`
    out.push({
      name: at,
      type: typeWord(sub),
      required: required.includes(name),
      description: typeof sub.description === 'string' ? sub.description : '',
    })
    if (isPlainObject(sub.properties)) out.push(...schemaFields(sub, `${at}.`))
  }
  return out
}

const always = (name: string, type: string, description: string): LogTypeField => ({
  name,
  type,
  required: true,
  description,
})

/** In the order checkEditorAuditRecord adds them (the stored line's tail). */
const STANDARD_FIELDS: readonly LogTypeField[] = [
  always('p_log_type', 'string', 'the log type'),
  always('p_event_time', 'string', "`metadata.timestamp` in UTC; the record is stored in that hour's partition"),
  always('p_parse_time', 'string', 'when rulekeeper received the record'),
  always('p_row_id', 'string', "the record's unique id in the store"),
  always('p_source_id', 'string', 'the log source that received it'),
  always('p_any_ip_addresses', 'list of strings', "the record's IP addresses"),
  always('p_any_emails', 'list of strings', "the record's e-mail addresses"),
  always('p_any_trace_ids', 'list of strings', 'ids that tie events together'),
  always('p_any_actor_ids', 'list of strings', 'who acted'),
]

export const editorAuditLogType: LogType = {
  name: EDITOR_AUDIT,
  table: tableName(EDITOR_AUDIT),
  qualifiedTable: `${PANTHER_LOGS}.${tableName(EDITOR_AUDIT)}`,
  schema: editorAuditSchema,
  recordFields: schemaFields(editorAuditSchema),
  standardFields: STANDARD_FIELDS,
  eventTimeField: 'metadata.timestamp',
  normalize: checkEditorAuditRecord,
}
