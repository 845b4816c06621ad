// One analysis file of the repository: parse it (numbers in `Reports` lists read as strings),
// decide its kind from `AnalysisType`, check it (unknown keys, schema). Writing a rule back to YAML
// is rules/rule-render.ts.
import type { DataPath, RuleKind, RuleProblem } from './model.js'
import { fileKeysOf, kindDef, kindOfData } from './kinds/index.js'
import { fileDataToView } from './mapping.js'
import { reportsAsStrings, reportsHaveNumbers } from './reports.js'
import { validateFileView } from './schemas.js'
import { positionInValue } from './value-position.js'
import { locate, parseYaml, readYaml, type ParsedYaml } from './yaml-text.js'
import { isPlainObject } from '../is-plain-object.js'

export interface ParsedAnalysisFile {
  path: string
  /** Line and column of a data path (the full reader parses the text on first use). */
  locate(at: DataPath): { line: number; column: number } | undefined
  data?: Record<string, unknown>
  analysisType?: string
  /** Set for the kinds served as rules (rules/kinds/). */
  kind?: RuleKind
  /** RuleID / PolicyID / GlobalID / DataModelID / QueryName, whichever the type has. */
  id?: string
  problems: RuleProblem[]
}

/** The kind of a file (rules/kinds/: its `AnalysisType` and the kind's own test), if it is served as a rule. */
export function kindOf(data: Record<string, unknown>): RuleKind | undefined {
  return kindOfData(data)
}

function idOf(data: Record<string, unknown>): string | undefined {
  const v = data.RuleID ?? data.PolicyID ?? data.GlobalID ?? data.DataModelID ?? data.QueryName
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined
}

/** Attaches line and column to problems that point into a parsed file. */
export function locateProblems(
  file: Pick<ParsedAnalysisFile, 'locate'>,
  problems: RuleProblem[],
  text?: string,
): RuleProblem[] {
  return problems.map((p) => {
    if (p.line !== undefined) return p
    const at = file.locate(p.path)
    if (at && p.inValue && text !== undefined) return { ...p, ...positionInValue(text, at, p.inValue) }
    return { ...p, ...at }
  })
}

/**
 * Reads an analysis file. Valid files (nearly all of a repository) go through the fast reader and
 * are parsed by the full one only when a problem must be located; everything else is decided by
 * the full reader, so problems and their positions are the same either way.
 */
export function parseAnalysisFile(path: string, text: string): ParsedAnalysisFile {
  const read = readYaml(text)
  let parsed: ParsedYaml | undefined = read.parsed
  const full = () => (parsed ??= parseYaml(text))
  const at = (p: DataPath) => locate(full(), p)
  if (read.errors.length > 0) {
    return {
      path,
      locate: at,
      problems: read.errors.map((e) => ({ path: [], message: e.message, line: e.line, column: e.column })),
    }
  }
  const value = read.value
  if (!isPlainObject(value)) return { path, locate: at, problems: [] }
  let data = value
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
