// Turns the bytes of one analysis file (and the .py beside it) into a FileRecord of the index:
// parsed, classified by AnalysisType, checked structurally and by its kind's engine (both at once),
// with every problem located by line and column. Used for full loads, incremental reindexing and
// API writes.
import path from 'node:path'
import { checkRule } from '../engine/check-rule.js'
import type { EngineContext, EngineRegistry } from '../engine/engine.js'
import type { RuleFile, RuleProblem, SupportFile } from '../rules/model.js'
import { fileDataToView, fileKeyOf } from '../rules/mapping.js'
import { pythonPathFor } from '../rules/paths.js'
import { checkRuleData, locateProblems, parseAnalysisFile } from '../rules/rule-file.js'
import type { FileRecord, IndexedRule } from '../rules/rule-index.js'
import { classifyUnserved } from '../rules/file-accounting.js'
import { checkDataModel } from '../rules/data-models.js'
import { kindDef } from '../rules/kinds/index.js'
import { checkYamlOffThread, OFFLOAD_MIN_CHARS } from '../rules/yaml-offload.js'
import { RulekeeperError } from '../errors.js'

export interface RecordSources {
  /**
   * The content of another file of the same revision, or undefined when it does not exist; throws a
   * PayloadTooLarge RulekeeperError for a file over rules.maxFileBytes (it is not read).
   */
  readFile(path: string): Promise<string | undefined>
  engines: EngineRegistry
  ctx: EngineContext
}

/**
 * Problems that depend on other rules (a reference to a missing rule, a reference cycle) are
 * computed when the rule is read (RuleEngine.describe), not stored: the other rules may change.
 */
const CONTEXTUAL = new Set(['DanglingReference', 'ReferenceCycle', 'UnknownScheduledQuery'])
const isContextual = (p: RuleProblem) => p.code !== undefined && CONTEXTUAL.has(p.code)

export async function buildFileRecord(
  filePath: string,
  text: string,
  src: RecordSources,
  prev?: FileRecord,
): Promise<FileRecord | null> {
  const rec = await buildRecord(filePath, text, src, prev)
  if (!rec) return rec
  const py = rec.rule?.file.pythonSource ?? rec.support?.pythonSource
  rec.bytes = Buffer.byteLength(text) + (py === undefined ? 0 : Buffer.byteLength(py))
  return rec
}

async function buildRecord(
  filePath: string,
  text: string,
  src: RecordSources,
  prev?: FileRecord,
): Promise<FileRecord | null> {
  // A large text is parsed first by the bounded reader in a worker thread (rules/yaml-offload.ts):
  // one that does not parse never costs the event loop its parse.
  if (text.length >= OFFLOAD_MIN_CHARS) {
    const problems = await checkYamlOffThread(text)
    if (problems.length > 0) {
      const errors = problems.map((e) => ({ path: [], message: e.message, line: e.line, column: e.column }))
      return { path: filePath, id: prev?.id, kind: prev?.kind, analysisType: prev?.analysisType, errors }
    }
  }
  const f = parseAnalysisFile(filePath, text)
  if (f.problems.length > 0) {
    // Unparsable: keep the id of the file's previous version so its last good rule keeps serving.
    return { path: filePath, id: prev?.id, kind: prev?.kind, analysisType: prev?.analysisType, errors: f.problems }
  }
  if (!f.kind) {
    // Not served as a rule: unsupported (with the reason), or invalid when it looks like an analysis
    // file but its AnalysisType is missing or unknown. Every YAML file is recorded (§5.1).
    const c = classifyUnserved(f.data)
    if ('problem' in c) {
      const errors = locateProblems(f, [c.problem])
      return { path: filePath, id: f.id ?? prev?.id, kind: prev?.kind, analysisType: f.analysisType, errors }
    }
    if ('unsupported' in c && (!f.data || f.analysisType === undefined))
      return { path: filePath, errors: [], unsupported: c.unsupported }
  }
  const data = f.data!
  const idKey = ['RuleID', 'PolicyID', 'GlobalID', 'DataModelID', 'QueryName'].find((k) => k in data)
  const idAt = idKey ? (topLevelKeyAt(text, idKey) ?? f.locate([idKey])) : undefined
  const pyName = typeof data.Filename === 'string' ? data.Filename : undefined
  let pythonPath: string | undefined
  let pythonSource: string | undefined
  if (pyName) {
    try {
      pythonPath = pythonPathFor(filePath, pyName)
      pythonSource = await src.readFile(pythonPath)
    } catch (err) {
      if (err instanceof RulekeeperError && err.code === 'PayloadTooLarge') {
        // The module is over the file limit: never read, and the file is invalid for it.
        const errors = locateProblems(f, [{ path: ['Filename'], message: err.message }])
        return {
          path: filePath,
          id: f.id ?? prev?.id,
          kind: f.kind ?? prev?.kind,
          analysisType: f.analysisType,
          errors,
        }
      }
      pythonPath = undefined
    }
  }
  if (!f.kind && f.analysisType === 'datamodel') {
    // Read and checked (valid or invalid, never unsupported): the Python engine's udm() reads it.
    const support: SupportFile = { analysisType: 'datamodel', path: filePath, data, pythonSource, pythonPath }
    const errors = locateProblems(f, checkDataModel(data, pythonSource))
    // An invalid one keeps its support (never served: rule-index) so a fix to its .py re-reads it.
    return { path: filePath, analysisType: 'datamodel', id: f.id, support, errors, idAt }
  }
  if (!f.kind) {
    const unsupported = (classifyUnserved(data) as { unsupported: string }).unsupported
    const analysisType = f.analysisType!
    if (f.id === undefined && analysisType !== 'global')
      return { path: filePath, analysisType, errors: [], unsupported }
    const support: SupportFile = { analysisType, path: filePath, data, pythonSource }
    return { path: filePath, analysisType, id: f.id, support, errors: [], idAt, unsupported }
  }
  const kind = f.kind
  const structural: RuleProblem[] = []
  // The kind's own id key: a policy's `PolicyID`, every rule's `RuleID`.
  const kindIdKey = fileKeyOf(kind, 'id') ?? 'RuleID'
  if (f.id === undefined || data[kindIdKey] === undefined || data[kindIdKey] === null)
    structural.push({ path: [kindIdKey], message: `${kindIdKey} is required` })
  structural.push(...checkRuleData(kind, data, pythonSource))
  const ruleFile: RuleFile = { kind, id: f.id ?? '', path: filePath, data, pythonSource, pythonPath }
  // Structure and language at once: a bad Severity does not hide a bad condition.
  const engine = src.engines[kind]
  const checked = checkRule(ruleFile, structural, engine, src.ctx)
  const errors = checked.errors.filter((e) => !isContextual(e))
  // What only running something finds (a query's SQL bound by DuckDB), once the rest is valid.
  if (errors.length === 0 && engine?.checkIndexed) errors.push(...(await engine.checkIndexed(ruleFile, src.ctx)))
  const warnings = checked.warnings.filter((w) => !isContextual(w))
  const base = { path: filePath, analysisType: f.analysisType, kind, id: f.id, idAt }
  if (errors.length > 0) return { ...base, id: f.id ?? prev?.id, errors: locateProblems(f, errors, text) }
  const view = fileDataToView(kind, data, pythonSource)
  const rule: IndexedRule = {
    kind,
    id: f.id!,
    path: filePath,
    pythonPath,
    file: ruleFile,
    view,
    search: searchKeys(f.id!, view),
    warnings: locateProblems(f, warnings),
  }
  // A query is also a support file: scheduled rules name it, scheduled runs look it up by name.
  const support: SupportFile | undefined = kindDef(kind).supportFile
    ? { analysisType: f.analysisType!, path: filePath, data }
    : undefined
  return { ...base, rule, errors: [], ...(support ? { support } : {}) }
}

/**
 * Where a top-level key of a block mapping is written: the first line starting with `key:`
 * (column 1). Continuation lines of a top-level value are indented, so only a key can start
 * there; other layouts (flow mappings, quoted keys) fall back to the full reader.
 */
function topLevelKeyAt(text: string, key: string): { line: number; column: number } | undefined {
  const m = new RegExp(`^${key}[ \\t]*:`, 'm').exec(text)
  if (!m) return undefined
  let line = 1
  for (let i = text.indexOf('\n'); i !== -1 && i < m.index; i = text.indexOf('\n', i + 1)) line++
  return { line, column: 1 }
}

export function searchKeys(id: string, view: Record<string, unknown>): IndexedRule['search'] {
  const name = typeof view.displayName === 'string' && view.displayName !== '' ? view.displayName : id
  return {
    name: name.toLowerCase(),
    id: id.toLowerCase(),
    tags: Array.isArray(view.tags) ? view.tags.map((t) => String(t).toLowerCase()) : [],
  }
}

/**
 * The YAML files (in `files`) whose `Filename` names the given .py path, or whose module the Python
 * check found broken (it holds no rule then, only the module's path: a fix of the .py alone re-reads it).
 */
export function ownersOfPython(files: Iterable<FileRecord>, pyPath: string): string[] {
  const dir = path.posix.dirname(pyPath)
  const base = path.posix.basename(pyPath)
  const out: string[] = []
  for (const f of files) {
    const data = f.rule?.file.data ?? f.support?.data
    if ((data && data.Filename === base && path.posix.dirname(f.path) === dir) || f.python?.path === pyPath)
      out.push(f.path)
  }
  return out
}
