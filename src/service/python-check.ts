// The index-time check of Python files: after the files of a revision change are re-read into a
// draft, every Python module among them — rules, global helpers, data models — and every file that
// depends on a changed helper (it imports it, directly or through other helpers) is compiled and
// imported by the engine that can (`RuleEngine.checkModules`: one sandboxed run for all of them).
// A module that fails makes its file invalid (a rule keeps serving its last good version, as for a
// broken YAML file); one importing a module the interpreter lacks is served but marked not run;
// one that could not be checked is marked unchecked and checked again at the next reindex.
import type {
  EngineContext,
  EngineRegistry,
  ModuleProblem,
  ModuleUnit,
  ModuleVerdict,
  RuleEngine,
} from '../engine/engine.js'
import { globalFilename, importedNames } from '../engine/python/imports.js'
import type { Logger } from '../log.js'
import type { RuleProblem } from '../rules/model.js'
import type { FileRecord, IndexDraft, PythonCheck, RuleIndex } from '../rules/rule-index.js'

export interface PythonCheckInput {
  /** YAML paths just re-read into the draft. */
  reread: readonly string[]
  /** The index the draft was made from (its files before the change), for helpers renamed or removed. */
  before?: RuleIndex
  /** Re-reads more YAML paths into the draft (a dependant whose last check removed its rule). */
  rereadMore(paths: string[]): Promise<readonly string[]>
  /** Also check every file whose last check could not run, though nothing it uses changed. */
  retryUnchecked?: boolean
  engines: EngineRegistry
  ctx: EngineContext
  log?: Logger
}

/** The engine of this build that compiles Python modules, if any. */
function moduleChecker(engines: EngineRegistry): RuleEngine | undefined {
  return Object.values(engines).find((e) => e?.checkModules !== undefined)
}

/** The Python module a valid record names (a rule's `.py`, a global helper's, a data model's). */
function unitOf(rec: FileRecord | undefined): ModuleUnit | undefined {
  if (!rec || rec.errors.length > 0) return undefined
  const rule = rec.rule
  if (rule && typeof rule.file.pythonSource === 'string' && rule.pythonPath)
    return {
      key: rec.path,
      analysisType: rec.analysisType ?? '',
      filename: rule.pythonPath,
      source: rule.file.pythonSource,
    }
  const s = rec.support
  if (!s || typeof s.pythonSource !== 'string') return undefined
  if (s.analysisType === 'global')
    return { key: rec.path, analysisType: 'global', filename: globalFilename(s), source: s.pythonSource }
  if (s.analysisType === 'datamodel' && s.pythonPath)
    return { key: rec.path, analysisType: 'datamodel', filename: s.pythonPath, source: s.pythonSource }
  return undefined
}

/** The names a record's module imports: from its source, or as its last check kept them. */
function importsOf(rec: FileRecord): readonly string[] {
  const source = rec.rule?.file.pythonSource ?? rec.support?.pythonSource
  return typeof source === 'string' ? [...importedNames(source)] : (rec.python?.imports ?? [])
}

const globalIdOf = (rec: FileRecord | undefined) =>
  rec?.analysisType === 'global' && rec.id !== undefined ? rec.id : undefined

/**
 * Every file importing one of `ids` (global helpers that changed), directly or through helpers that
 * import them, in the draft.
 */
function dependantsOf(draft: IndexDraft, ids: Set<string>): Set<string> {
  const out = new Set<string>()
  if (ids.size === 0) return out
  const importers = new Map<string, FileRecord[]>()
  for (const f of draft.allFiles()) {
    for (const name of importsOf(f)) {
      const list = importers.get(name)
      if (list) list.push(f)
      else importers.set(name, [f])
    }
  }
  const todo = [...ids]
  const seen = new Set(todo)
  while (todo.length > 0) {
    for (const f of importers.get(todo.pop()!) ?? []) {
      if (out.has(f.path)) continue
      out.add(f.path)
      const id = globalIdOf(f)
      if (id !== undefined && !seen.has(id)) {
        seen.add(id)
        todo.push(id)
      }
    }
  }
  return out
}

/**
 * Globals are found by id even while their own file is invalid (a helper that does not import is
 * not served): a module importing it is then checked against its real error, not "not installed".
 */
function checkContext(draft: IndexDraft, ctx: EngineContext): EngineContext {
  return {
    ...ctx,
    findSupport: (id) =>
      ctx.findSupport(id) ??
      draft
        .holdersOf(id)
        .map((p) => draft.getFile(p)?.support)
        .find((s) => s?.analysisType === 'global'),
  }
}

function problemOf(unit: ModuleUnit, p: ModuleProblem): RuleProblem {
  return {
    path: ['Filename'],
    message: p.code ? `${unit.filename} ${p.message}` : `${unit.filename} failed to import: ${p.message}`,
    code: p.code ?? 'PythonImportError',
    file: p.file ?? unit.filename,
    ...(p.line !== null ? { line: p.line } : {}),
    ...(p.column !== null ? { column: p.column } : {}),
  }
}

function applyVerdict(draft: IndexDraft, unit: ModuleUnit, verdict: ModuleVerdict): void {
  const rec = draft.getFile(unit.key)
  if (!rec) return
  const python: PythonCheck = { path: unit.filename, imports: [...importedNames(unit.source)] }
  if (verdict.status === 'ok') draft.putFile({ ...rec, python })
  else if (verdict.status === 'unchecked') draft.putFile({ ...rec, python: { ...python, unchecked: verdict.reason } })
  else if (verdict.status === 'not-run') {
    const notRun = { ...problemOf(unit, verdict.problem), message: verdict.problem.message }
    draft.putFile({ ...rec, python: { ...python, notRun } })
  } else {
    // Invalid: the rule is no longer this file's (its last good version keeps serving, rule-index.ts);
    // a helper or data model keeps its support so modules importing it are checked against its error.
    const { rule: _rule, ...rest } = rec
    draft.putFile({ ...rest, errors: [problemOf(unit, verdict.problem)], python })
  }
}

/**
 * Checks the Python of the files re-read into the draft and of their dependants. Never throws for
 * what the modules do: a module's problems become its file's; without a sandbox they are unchecked.
 */
export async function checkDraftPython(draft: IndexDraft, input: PythonCheckInput): Promise<void> {
  const checker = moduleChecker(input.engines)
  if (!checker?.checkModules) return
  const started = performance.now()
  const paths = new Set(input.reread)
  // Helpers whose file changed (their id before and after): the files importing them are checked again.
  const changedHelpers = new Set<string>()
  for (const p of input.reread) {
    for (const id of [globalIdOf(input.before?.files.get(p)), globalIdOf(draft.getFile(p))])
      if (id !== undefined) changedHelpers.add(id)
  }
  const more = dependantsOf(draft, changedHelpers)
  if (input.retryUnchecked) for (const f of draft.allFiles()) if (f.python?.unchecked !== undefined) more.add(f.path)
  // A dependant still valid is checked as it is; one whose rule a failed check removed is read again.
  const again: string[] = []
  for (const p of more) {
    if (paths.has(p)) continue
    const rec = draft.getFile(p)
    if (unitOf(rec)) paths.add(p)
    else if (rec?.python) again.push(p)
  }
  if (again.length > 0) for (const p of await input.rereadMore(again)) paths.add(p)
  const units = [...paths].map((p) => unitOf(draft.getFile(p))).filter((u): u is ModuleUnit => u !== undefined)
  if (units.length === 0) return
  const verdicts = await checker.checkModules(units, checkContext(draft, input.ctx))
  const tally = { ok: 0, invalid: 0, 'not-run': 0, unchecked: 0 }
  for (const unit of units) {
    const verdict = verdicts.get(unit.key) ?? { status: 'unchecked', reason: 'the check reported nothing for it' }
    tally[verdict.status]++
    applyVerdict(draft, unit, verdict)
  }
  input.log?.info(
    { modules: units.length, ...tally, ms: Math.round(performance.now() - started) },
    'checked the Python modules of the revision',
  )
}

/** Whether some file of the index could not have its Python checked (a reconcile tries again). */
export function hasUncheckedPython(index: RuleIndex): boolean {
  for (const f of index.files.values()) if (f.python?.unchecked !== undefined) return true
  return false
}
