// One analysis file of the repository: parse it, decide its kind from `AnalysisType`, check it
// (unknown keys, schema), and render a rule back to YAML. Rendering edits the existing document
// when there is one, so the comments, key order and untouched fields people wrote survive.
import { isMap, isScalar, type Document } from 'yaml'
import type { DataPath, RuleKind, RuleProblem } from './model.js'
import { fieldsOf, fileKeysOf, kindDef, kindOfData } from './kinds/index.js'
import { fileDataToView } from './mapping.js'
import { validateFileView } from './schemas.js'
import { loadYamlFast, locate, parseYaml, stringifyDocument, stringifyYaml, type ParsedYaml } from './yaml-text.js'
import { isPlainObject } from '../is-plain-object.js'

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
  if (!isPlainObject(value)) return { path, locate: at, problems: [] }
  const data = value
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

const deepEqual = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/**
 * The YAML text of a rule. With `existing` (the file's current text), the document is edited in
 * place: keys whose value did not change keep their node (and comments), changed keys are replaced
 * where they stand, new keys are appended, and keys of the field table that the rule no longer has
 * are removed. Keys outside the table (housekeeping, unknown) are left as they are.
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
  // Only keys the API writes may be removed; housekeeping and read-only keys (CreatedBy) stay.
  const owned = new Set(
    fieldsOf(kind)
      .filter((f) => !f.readOnly)
      .map((f) => f.file),
  )
  for (const [key, value] of Object.entries(data)) {
    if (key in old && deepEqual(old[key], value)) continue
    const node = doc.get(key, true)
    // A changed scalar keeps its node (and so its comment); anything else is a new node in place.
    if (isScalar(node) && (value === null || typeof value !== 'object')) node.value = value
    else doc.set(key, doc.createNode(value))
  }
  for (const key of Object.keys(old)) {
    if (!(key in data) && owned.has(key)) doc.delete(key)
  }
  return stringifyDocument(doc)
}
