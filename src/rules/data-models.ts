// Data models (`AnalysisType: datamodel`): the structural check that decides whether a data model
// file is valid (every problem with its path), and which data model serves a log type. They are
// not served as rules; the Python engine reads them through EngineContext.findDataModel for
// `event.udm()` (engine/python/data-models.ts).
import type { RuleProblem, SupportFile } from './model.js'

const isText = (v: unknown): v is string => typeof v === 'string' && v.trim() !== ''

/**
 * Whether a module defines `name` at its top level: `def name(`, `async def name(`, `name = …` or
 * `name: T = …`, or an import binding it. A static look (PAT imports the module); a name bound some
 * other way is reported missing, which the author sees at once.
 */
function definesName(source: string, name: string): boolean {
  const n = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  const forms = [
    `^(?:async[ \\t]+)?def[ \\t]+${n}[ \\t]*\\(`,
    `^${n}[ \\t]*(?::[^=\\n]*)?=(?!=)`,
    `^(?:from[ \\t]+[\\w.]+[ \\t]+)?import[ \\t][^\\n]*\\b${n}\\b`,
  ]
  return forms.some((f) => new RegExp(f, 'm').test(source))
}

/**
 * The problems of a data model file, in the order of its keys: `DataModelID`, `Enabled`, `LogTypes`,
 * `Filename` (a `.py` beside it, found), `Mappings` (each `Name` once, exactly one of `Path` and
 * `Method`, a Method defined by the module). As panther_analysis_tool's schema and DataModel.
 */
export function checkDataModel(
  data: Readonly<Record<string, unknown>>,
  pythonSource: string | undefined,
): RuleProblem[] {
  const problems: RuleProblem[] = []
  if (!isText(data.DataModelID))
    problems.push({ path: ['DataModelID'], message: 'DataModelID must be a non-empty string' })
  if (typeof data.Enabled !== 'boolean') problems.push({ path: ['Enabled'], message: 'Enabled must be true or false' })
  const logTypes = data.LogTypes
  if (!Array.isArray(logTypes) || logTypes.length === 0) {
    problems.push({ path: ['LogTypes'], message: 'LogTypes must be a non-empty list of log types' })
  } else {
    logTypes.forEach((lt, i) => {
      if (!isText(lt)) problems.push({ path: ['LogTypes', i], message: 'a log type must be a non-empty string' })
    })
  }
  const filename = data.Filename
  if (filename !== undefined) {
    if (!isText(filename) || !filename.endsWith('.py'))
      problems.push({ path: ['Filename'], message: 'Filename must name the data model’s .py file' })
    else if (pythonSource === undefined)
      problems.push({
        path: ['Filename'],
        message: `the data model module '${filename}' was not found beside the file`,
        code: 'MissingPythonModule',
      })
  }
  const mappings = data.Mappings
  if (!Array.isArray(mappings)) {
    problems.push({ path: ['Mappings'], message: 'Mappings must be a list of {Name, Path} or {Name, Method}' })
    return problems
  }
  const seen = new Set<string>()
  mappings.forEach((m, i) => {
    if (!m || typeof m !== 'object' || Array.isArray(m)) {
      problems.push({ path: ['Mappings', i], message: 'a mapping must be {Name, Path} or {Name, Method}' })
      return
    }
    const mapping = m as Record<string, unknown>
    if (!isText(mapping.Name))
      problems.push({ path: ['Mappings', i, 'Name'], message: 'Name must be a non-empty string' })
    else if (seen.has(mapping.Name))
      problems.push({ path: ['Mappings', i, 'Name'], message: `the unified field '${mapping.Name}' is mapped twice` })
    else seen.add(mapping.Name)
    const hasPath = mapping.Path !== undefined
    const hasMethod = mapping.Method !== undefined
    if (hasPath === hasMethod) {
      problems.push({ path: ['Mappings', i], message: 'a mapping has exactly one of Path and Method' })
      return
    }
    if (hasPath && !isText(mapping.Path)) {
      problems.push({ path: ['Mappings', i, 'Path'], message: 'Path must be a key path (a.b) or a JSONPath ($.a.b)' })
    }
    if (hasMethod) {
      if (!isText(mapping.Method)) {
        problems.push({
          path: ['Mappings', i, 'Method'],
          message: 'Method must name a function of the data model module',
        })
      } else if (filename === undefined) {
        problems.push({
          path: ['Mappings', i, 'Method'],
          message: `Method '${mapping.Method}' needs the data model's Filename (the module defining it)`,
        })
      } else if (pythonSource !== undefined && !definesName(pythonSource, mapping.Method)) {
        problems.push({
          path: ['Mappings', i, 'Method'],
          message: `Method '${mapping.Method}' is not defined in ${String(filename)}`,
        })
      }
    }
  })
  return problems
}

/** Whether a support file is a data model that serves log types (valid ones only reach the index). */
export function isDataModel(file: SupportFile | undefined): file is SupportFile {
  return file !== undefined && file.analysisType === 'datamodel'
}

/**
 * Log type → the enabled data model serving it. When two enabled data models claim one log type
 * (panther_analysis_tool refuses that repository), the one whose path sorts first serves it.
 */
export function dataModelsByLogType(supports: Iterable<SupportFile>): Map<string, SupportFile> {
  const models = [...supports].filter((s) => isDataModel(s) && s.data.Enabled === true)
  models.sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)))
  const out = new Map<string, SupportFile>()
  for (const m of models) {
    for (const lt of Array.isArray(m.data.LogTypes) ? m.data.LogTypes : []) {
      if (typeof lt === 'string' && !out.has(lt)) out.set(lt, m)
    }
  }
  return out
}
