// docs/editor-audit-schema.md lists exactly the fields of the Editor.Audit schema, each with the
// schema's type and required flag, and exactly the p_* fields a stored record gets: a field added
// to or removed from the schema without the page (or the other way round) fails here. The log-type
// registry (GET /log-types) serves the same fields with the page's meanings, in the page's order.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { checkEditorAuditRecord } from '../../src/ingest/editor-audit-record.js'
import { editorAuditSchema } from '../../src/ingest/editor-audit-schema.js'
import { listLogTypes } from '../../src/ingest/log-types.js'
import { isPlainObject } from '../../src/is-plain-object.js'
import { EXAMPLES } from './helpers.js'

const ROOT = path.resolve(import.meta.dirname, '../..')
const PAGE = fs.readFileSync(path.join(ROOT, 'docs/editor-audit-schema.md'), 'utf8')

interface Row {
  type: string
  required: string
}

/** The page's field rows: a table row whose first cell is one `name`. */
function pageRows(): Map<string, Row> {
  const rows = new Map<string, Row>()
  for (const [name, row] of pageRowsWithMeaning()) rows.set(name, { type: row.type, required: row.required })
  return rows
}

/** The rows with their "meaning" column, in the page's order. */
function pageRowsWithMeaning(): Map<string, Row & { meaning: string }> {
  const rows = new Map<string, Row & { meaning: string }>()
  for (const line of PAGE.split('\n')) {
    const cells = /^\| `([a-z_.]+)` \| ([^|]+) \| ([^|]+) \| ([^|]*) \|/.exec(line)
    if (!cells) continue
    t.notOk(rows.has(cells[1]!), `${cells[1]} is listed once`)
    rows.set(cells[1]!, { type: cells[2]!.trim(), required: cells[3]!.trim(), meaning: cells[4]!.trim() })
  }
  return rows
}

function typeName(schema: Record<string, unknown>): string {
  if (Array.isArray(schema.anyOf)) return 'integer' // a JSON integer or a decimal string
  if (schema.type === 'array') return 'list of strings'
  return String(schema.type)
}

/** Every property of the schema by its dotted path, objects included. */
function schemaRows(schema: Record<string, unknown>, prefix = '', out = new Map<string, Row>()): Map<string, Row> {
  const required = (schema.required as string[] | undefined) ?? []
  for (const [name, sub] of Object.entries(schema.properties as Record<string, Record<string, unknown>>)) {
    const at = `${prefix}${name}`
    out.set(at, { type: typeName(sub), required: required.includes(name) ? 'yes' : 'no' })
    if (isPlainObject(sub.properties)) schemaRows(sub, `${at}.`, out)
  }
  return out
}

t.test('the page lists every schema field with its type and required flag, and nothing else', async (t) => {
  const page = pageRows()
  const schema = schemaRows(editorAuditSchema)
  t.ok(schema.size > 100, 'the envelope and the 18 kinds')
  const documented = new Map([...page].filter(([name]) => !name.startsWith('p_')))
  t.same([...documented.keys()].sort(), [...schema.keys()].sort(), 'the same fields')
  for (const [name, row] of schema) t.same(documented.get(name), row, name)
})

t.test('the page lists exactly the p_* fields a stored record gets', async (t) => {
  const line = fs.readFileSync(path.join(EXAMPLES, 'valid.ndjson'), 'utf8').split('\n')[0]!
  const verdict = checkEditorAuditRecord(JSON.parse(line), { sourceId: 'editor-audit', parseTime: 'now', rowId: 'r1' })
  if (!verdict.ok) throw new Error(verdict.reason)
  const added = Object.keys(verdict.stored).filter((k) => k.startsWith('p_'))
  const listed = [...pageRows()].filter(([name]) => name.startsWith('p_'))
  t.same(
    listed.map(([name]) => name),
    added,
    'the same fields, in the stored order',
  )
  for (const [name, row] of listed) {
    const value = verdict.stored[name]
    t.equal(row.type, Array.isArray(value) ? 'list of strings' : typeof value, `${name}: type`)
    t.equal(row.required, 'always added')
  }
})

t.test('the registry lists the fields of the page, in its order, with its types, flags and meanings', async (t) => {
  const entry = listLogTypes().find((lt) => lt.name === 'Editor.Audit')
  if (!entry) throw new Error('Editor.Audit is not registered')
  const page = [...pageRowsWithMeaning()].map(([name, row]) => ({
    name,
    type: row.type,
    required: row.required !== 'no',
    description: row.meaning,
  }))
  t.ok(page.length > 100, 'the page rows are read')
  t.same(entry.fields, page)
})
