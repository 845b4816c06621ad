// A rule back to YAML, keeping what a person wrote: a new file is the canonical rendering; an
// existing file is edited where the rule changed, by meaning (a default-valued key, a severity's
// spelling, a number in Reports stay as written). When every change is a scalar, the edit is made
// on the file's own text (its layout, quoting and comments untouched); otherwise on the document.
import {
  Composer,
  CST,
  isAlias,
  isMap,
  isNode,
  isScalar,
  isSeq,
  Parser,
  visit,
  type Document,
  type YAMLMap,
} from 'yaml'
import type { YAMLSeq } from 'yaml'
import type { FieldSpec } from './fields.js'
import { fieldsOf } from './kinds/index.js'
import { effectiveFileValue } from './mapping.js'
import type { RuleKind } from './model.js'
import { reportsAsStrings, reportsHaveNumbers } from './reports.js'
import { parseYaml, stringifyDocument, stringifyYaml } from './yaml-text.js'

type Path = Array<string | number>

interface EditLog {
  /** Scalars changed in place, by their path in the document. */
  scalars: Array<{ path: Path; value: unknown }>
  /** Whether any change added, removed or replaced a node (the text route cannot express it). */
  structural: boolean
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)

/** Deep equality of plain data, ignoring the order of map keys. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => sameValue(v, b[i]))
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return Number.isNaN(a) && Number.isNaN(b)
  const keys = Object.keys(a)
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && sameValue(a[k], b[k]))
}

/**
 * The YAML text of a rule. With `existing` (the file's current text), the document is edited in
 * place: keys the rule has with the same meaning keep their node (value as written, comments),
 * changed values are edited where they stand (maps key by key, lists of the same length item by
 * item, scalars in place) and new keys are appended. A key of the field table that the rule no
 * longer has is removed, unless what the file says is its default (a `Threshold: 1` a person wrote
 * stays). Keys outside the table (housekeeping, unknown) are left as they are. Nothing changed:
 * the existing text, byte for byte.
 */
export function renderRuleFile(kind: RuleKind, data: Record<string, unknown>, existing?: string): string {
  if (existing !== undefined) {
    const parsed = parseYaml(existing)
    if (parsed.errors.length === 0 && isMap(parsed.doc.contents)) return editDocument(kind, parsed.doc, data, existing)
  }
  return stringifyYaml(data)
}

function editDocument(kind: RuleKind, doc: Document.Parsed, data: Record<string, unknown>, existing: string): string {
  // parseYaml bounded this document's aliases by their expanded size.
  const old = (doc.toJS({ maxAliasCount: -1 }) ?? {}) as Record<string, unknown>
  // The file's numbers in Reports lists mean the strings they are written as (as when it is read).
  if (reportsHaveNumbers(old.Reports)) old.Reports = reportsAsStrings(old.Reports, doc)
  // Only keys the API writes may be removed; housekeeping and read-only keys (CreatedBy) stay.
  const fields = new Map<string, FieldSpec>(
    fieldsOf(kind)
      .filter((f) => !f.readOnly)
      .map((f) => [f.file, f]),
  )
  // Same meaning: equal values, or (for a field with a default or spelling rules) equal effective values.
  const same = (key: string, before: unknown, after: unknown) => {
    if (sameValue(before, after)) return true
    const f = fields.get(key)
    if (f === undefined) return false
    if (f.yamlText) return (before ?? null) === null && (after ?? null) === null
    return sameValue(effectiveFileValue(kind, f, before), effectiveFileValue(kind, f, after))
  }
  const log: EditLog = { scalars: [], structural: false }
  const root = doc.contents as YAMLMap
  for (const [key, value] of Object.entries(data)) {
    const had = Object.hasOwn(old, key)
    if (had && same(key, old[key], value)) continue
    const after = key === 'Tests' && had ? keepWrittenMocks(old[key], value) : value
    editEntry(doc, root, [key], old[key], after, had, log)
  }
  for (const key of Object.keys(old)) {
    if (Object.hasOwn(data, key) || !fields.has(key)) continue
    // The rule has the key's default: a file that says so (`Threshold: 1`, `Tags: []`) stays as written.
    if (same(key, old[key], undefined)) continue
    detachAnchor(doc, root.get(key, true))
    doc.delete(key)
    log.structural = true
  }
  if (!log.structural && log.scalars.length === 0) return existing
  if (!log.structural) {
    const text = editText(existing, log.scalars)
    // The text route must say exactly what the edited document says; otherwise the document's.
    if (text !== undefined) {
      const check = parseYaml(text)
      if (check.errors.length === 0 && sameValue(check.value, doc.toJS({ maxAliasCount: -1 }))) return text
    }
  }
  return stringifyDocument(doc)
}

/** A test item that wrote `Mocks: []` keeps it (the API leaves the default out of the file form). */
function keepWrittenMocks(before: unknown, after: unknown): unknown {
  if (!Array.isArray(before) || !Array.isArray(after)) return after
  return after.map((item, i) => {
    const was = before[i]
    if (!isPlainObject(item) || !isPlainObject(was) || Object.hasOwn(item, 'Mocks')) return item
    return Array.isArray(was.Mocks) && was.Mocks.length === 0 ? { ...item, Mocks: [] } : item
  })
}

/** Whether a map's keys are all plain strings (so `get(key)` with the JS key finds them). */
const stringKeyed = (node: YAMLMap) => node.items.every((p) => isScalar(p.key) && typeof p.key.value === 'string')

/**
 * Sets the value at `path` (in `parent` under `key`) from `before` to `after`, touching as little
 * of the document as it can: a map is edited key by key (its order and the comments of untouched
 * keys kept), a list of the same length item by item, a scalar in place (its comment and quoting
 * kept). Anchored nodes and aliases are replaced whole, so an edit never leaks through an alias.
 */
function editEntry(
  doc: Document,
  parent: YAMLMap | YAMLSeq,
  path: Path,
  before: unknown,
  after: unknown,
  existed: boolean,
  log: EditLog,
): void {
  if (existed && sameValue(before, after)) return
  const key = path[path.length - 1]!
  const node = existed ? parent.get(key, true) : undefined
  const shared = isNode(node) && (isAlias(node) || node.anchor !== undefined)
  if (!shared && isMap(node) && stringKeyed(node) && isPlainObject(before) && isPlainObject(after)) {
    for (const [k, v] of Object.entries(after))
      editEntry(doc, node, [...path, k], before[k], v, Object.hasOwn(before, k), log)
    for (const k of Object.keys(before)) {
      if (Object.hasOwn(after, k)) continue
      detachAnchor(doc, node.get(k, true))
      node.delete(k)
      log.structural = true
    }
    return
  }
  if (!shared && isSeq(node) && Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    for (const [i, v] of after.entries()) editEntry(doc, node, [...path, i], before[i], v, true, log)
    return
  }
  if (!shared && isScalar(node) && (after === null || typeof after !== 'object')) {
    node.value = after
    log.scalars.push({ path, value: after })
    return
  }
  detachAnchor(doc, node)
  parent.set(key, doc.createNode(after))
  log.structural = true
}

/**
 * Before a node is replaced or removed, the aliases to anchors in it get a copy of the anchored
 * value, so they keep meaning what they meant (and none is left pointing at nothing).
 */
function detachAnchor(doc: Document, node: unknown): void {
  if (!isNode(node) || isAlias(node)) return
  const values = new Map<string, unknown>()
  const collect = (n: unknown) => {
    if (isNode(n) && !isAlias(n) && n.anchor !== undefined) values.set(n.anchor, n.toJS(doc, { maxAliasCount: -1 }))
  }
  collect(node)
  if (isMap(node) || isSeq(node)) visit(node, { Node: (_, n) => void collect(n) })
  if (values.size === 0) return
  visit(doc, {
    Alias: (_, alias) => (values.has(alias.source) ? doc.createNode(values.get(alias.source)) : undefined),
  })
}

/**
 * The scalar edits applied to the file's own text (its concrete syntax tree), so every other byte
 * stays. A string keeps the quotes it had; anything else is written as YAML would write it, quoted
 * where it would otherwise read as something else (`"3.10"`). Undefined when a value cannot be
 * written on one line this way (the document route then writes it).
 */
function editText(text: string, edits: EditLog['scalars']): string | undefined {
  const tokens = [...new Parser().parse(text)]
  const docs = [...new Composer({ version: '1.2', schema: 'core', keepSourceTokens: true }).compose(tokens)]
  if (docs.length !== 1) return undefined
  for (const { path, value } of edits) {
    const node = docs[0]!.getIn(path, true)
    if (!isScalar(node) || !node.srcToken) return undefined
    if (typeof value === 'string' && /[\n\r]/.test(value)) return undefined
    const written = stringifyYaml(value).replace(/\n$/, '')
    if (written.includes('\n')) return undefined
    const quoted = node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE'
    const type =
      typeof value === 'string' && quoted
        ? node.type
        : written.startsWith('"')
          ? 'QUOTE_DOUBLE'
          : written.startsWith("'")
            ? 'QUOTE_SINGLE'
            : 'PLAIN'
    CST.setScalarValue(node.srcToken, typeof value === 'string' ? value : written, { type })
  }
  return tokens.map((t) => CST.stringify(t)).join('')
}
