// The log types `GET /log-types` lists (api/log-types-route.ts), until the log-type registry of
// issue 26 serves them: the one log type ingested, its name and fields read from its JSON Schema
// (audit/editor-audit-schema.ts), its table named as Panther names it. A stand-in main.ts hands over.
import { editorAuditSchema } from './audit/editor-audit-schema.js'

interface Field {
  name: string
  type: string
  required: boolean
  description: string
}

interface Schema {
  type?: string
  format?: string
  anyOf?: Schema[]
  items?: Schema
  required?: string[]
  properties?: Record<string, Schema>
  description?: string
}

const typeOf = (s: Schema): string =>
  s.anyOf ? 'integer' : s.type === 'array' ? `list of ${typeOf(s.items ?? {})}s` : (s.type ?? 'any')

/** Every field of the schema as a dotted path, objects included, in the schema's order. */
function fieldsOf(s: Schema, prefix = '', out: Field[] = []): Field[] {
  for (const [key, child] of Object.entries(s.properties ?? {})) {
    const name = `${prefix}${key}`
    const description = child.description ?? ''
    out.push({ name, type: typeOf(child), required: s.required?.includes(key) ?? false, description })
    fieldsOf(child, `${name}.`, out)
  }
  return out
}

export function listLogTypes() {
  const name = editorAuditSchema.$id
  const table = `panther_logs.public.${name.replaceAll('.', '_').toLowerCase()}`
  return [{ name, table, fields: fieldsOf(editorAuditSchema as Schema) }]
}
