// One analysis file of the repository: parse it, decide its kind from `AnalysisType`, check it
// (unknown keys, schema), and render a rule back to YAML. Rendering edits the existing document
// when there is one, so the comments, key order, untouched fields and default-valued keys people
// wrote survive.
import { isAlias, isMap, isNode, isScalar, isSeq, type Document, type YAMLMap, type YAMLSeq } from 'yaml'
import type { DataPath, RuleKind, RuleProblem } from './model.js'
import { fieldsOf, fileKeysOf, kindDef, kindOfData } from './kinds/index.js'
import { effectiveFileValue, fileDataToView } from './mapping.js'
import { reportsAsStrings, reportsHaveNumbers } from './reports.js'
import { validateFileView } from './schemas.js'
import { loadYamlFast, locate, parseYaml, stringifyDocument, stringifyYaml, type ParsedYaml } from './yaml-text.js'

export interface ParsedAnalysisFile {
  path: string
  /** Line and column of a data path (the full reader parses the text on first use). */
  locate(at: DataPath): { line: number; column: number } | undefined
  data?: Record<string, unknown>
  analysisType?: string
  /** Set for the kinds served as rules (rules/kinds/). */
  kind?: RuleKind
  /** RuleID / PolicyID / GlobalID / QueryName, whichever the type has. */
  id?: string
  problems: RuleProblem[]
}

/** The kind of a file (rules/kinds/: its `AnalysisType` and the kind's own test), if it is served as a rule. */
export function kindOf(data: Record<string, unknown>): RuleKind | undefined {
  return kindOfData(data)
}

function idOf(data: Record<string, unknown>): string | undefined {
  const v = data.RuleID ?? data.PolicyID ?? data.GlobalID ?? data.QueryName
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined
}

/** Attaches line and column to problems that point into a parsed file. */
export function locateProblems(file: Pick<ParsedAnalysisFile, 'locate'>, problems: RuleProblem[]): RuleProblem[] {
  return problems.map((p) => (p.line !== undefined ? p : { ...p, ...file.locate(p.path) }))
}

/**
 * Reads an analysis file. Valid files (nearly all of a repository) go through the fast reader and
 * are parsed by the full one only when a problem must be located; everything else is decided by
 * the full reader, so problems and their positions are the same either way.
 */
export function parseAnalysisFile(path: string, text: string): ParsedAnalysisFile {
  let parsed: ParsedYaml | undefined
  const full = () => (parsed ??= parseYaml(text))
  const at = (p: DataPath) => locate(full(), p)
  const fast = loadYamlFast(text)
  if (!fast && full().errors.length > 0) {
    return {
      path,
      locate: at,
      problems: full().errors.map((e) => ({ path: [], message: e.message, line: e.line, column: e.column })),
    }
  }
  const value = fast ? fast.value : full().value
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { path, locate: at, problems: [] }
  let data = value as Record<string, unknown>
  // Numbers in `Reports` lists are read as strings, spelled as written (§5.2; rare, so the full
  // reader's document is asked only then).
  if (reportsHaveNumbers(data.Reports)) data = { ...data, Reports: reportsAsStrings(data.Reports, full().doc) }
  const analysisType = typeof data.AnalysisType === 'string' ? data.AnalysisType : undefined
  return { path, locate: at, data, analysisType, kind: kindOf(data), id: idOf(data), problems: [] }
}

/** Structural problems of a rule file (unknown keys, schema); the engines check the language. */
export function checkRuleData(kind: RuleKind, data: Record<string, unknown>, companionSource?: string): RuleProblem[] {
  const problems: RuleProblem[] = []
  const known = fileKeysOf(kind)
  for (const key of Object.keys(data)) {
    if (!known.has(key)) problems.push({ path: [key], message: `unknown key ${key} for a ${kind} rule` })
  }
  const def = kindDef(kind)
  for (const key of def.requiredFileKeys) {
    if (data[key] === undefined || data[key] === null) problems.push({ path: [key], message: `${key} is required` })
  }
  const companion = def.companion
  if (companion) {
    const name = data[companion.fileKey]
    if (typeof name !== 'string' || name === '')
      problems.push({ path: [companion.fileKey], message: `${companion.fileKey} is required` })
    else if (companionSource === undefined)
      problems.push({
        path: [companion.fileKey],
        message: `the ${companion.noun} ${name} named by ${companion.fileKey} does not exist`,
      })
  }
  problems.push(...validateFileView(kind, fileDataToView(kind, data, companionSource)))
  return problems
}

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

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  !!v && typeof v === 'object' && !Array.isArray(v)

/**
 * The YAML text of a rule. With `existing` (the file's current text), the document is edited in
 * place: keys the rule has with the same meaning keep their node (value as written, comments),
 * changed values are edited where they stand (maps key by key, lists of the same length item by
 * item, scalars in place) and new keys are appended. A key of the field table that the rule no
 * longer has is removed, unless what the file says is its default (a `Threshold: 1` a person wrote
 * stays). Keys outside the table (housekeeping, unknown) are left as they are.
 */
export function renderRuleFile(kind: RuleKind, data: Record<string, unknown>, existing?: string): string {
  if (existing !== undefined) {
    const parsed = parseYaml(existing)
    if (parsed.errors.length === 0 && isMap(parsed.doc.contents)) return editDocument(kind, parsed.doc, data)
  }
  return stringifyYaml(data)
}

function editDocument(kind: RuleKind, doc: Document.Parsed, data: Record<string, unknown>): string {
  // parseYaml bounded this document's aliases by their expanded size.
  const old = (doc.toJS({ maxAliasCount: -1 }) ?? {}) as Record<string, unknown>
  // The file's numbers in Reports lists mean the strings they are written as (as when it is read).
  if (reportsHaveNumbers(old.Reports)) old.Reports = reportsAsStrings(old.Reports, doc)
  // Only keys the API writes may be removed; housekeeping and read-only keys (CreatedBy) stay.
  const fields = new Map(
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
  const root = doc.contents as YAMLMap
  for (const [key, value] of Object.entries(data)) {
    if (Object.hasOwn(old, key) && same(key, old[key], value)) continue
    editEntry(doc, root, key, old[key], value, Object.hasOwn(old, key))
  }
  for (const key of Object.keys(old)) {
    if (Object.hasOwn(data, key) || !fields.has(key)) continue
    // The rule has the key's default: a file that says so (`Threshold: 1`, `Tags: []`) stays as written.
    if (same(key, old[key], undefined)) continue
    doc.delete(key)
  }
  return stringifyDocument(doc)
}

/**
 * Sets `parent[key]` from `before` to `after`, touching as little of the document as it can: a map
 * is edited key by key (its order and the comments of untouched keys kept), a list of the same
 * length item by item, a scalar in place (its comment and quoting kept). Anchored nodes and aliases
 * are replaced whole, so an edit never leaks through an alias into another part of the file.
 */
function editEntry(
  doc: Document,
  parent: YAMLMap | YAMLSeq,
  key: string | number,
  before: unknown,
  after: unknown,
  existed: boolean,
): void {
  if (existed && sameValue(before, after)) return
  const node = existed ? parent.get(key, true) : undefined
  const shared = isNode(node) && (isAlias(node) || node.anchor !== undefined)
  if (!shared && isMap(node) && isPlainObject(before) && isPlainObject(after)) {
    for (const [k, v] of Object.entries(after)) editEntry(doc, node, k, before[k], v, Object.hasOwn(before, k))
    for (const k of Object.keys(before)) if (!Object.hasOwn(after, k)) node.delete(k)
    return
  }
  if (!shared && isSeq(node) && Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    after.forEach((v, i) => editEntry(doc, node, i, before[i], v, true))
    return
  }
  if (!shared && isScalar(node) && (after === null || typeof after !== 'object')) {
    node.value = after
    return
  }
  parent.set(key, doc.createNode(after))
}
