// Which global helpers a rule needs. Decision: the server sends the worker, with each job, every
// global whose GlobalID the rule's source (and, recursively, those globals' sources) names in an
// import statement; the worker serves them by name from memory. This keeps the engine seam as it is
// (globals are only found by id, never listed) and the worker free of callbacks into the server.
// A computed import (`importlib.import_module(name)` with a non-literal name) is not seen.
import type { SupportFile } from '../../rules/model.js'
import type { EngineContext } from '../engine.js'
import type { ModuleSource } from './protocol.js'

// `import a, b.c as d` / `from a.b import c` / import_module("a") / __import__("a"), anywhere in a line
// (imports inside functions and try blocks count). Comments and strings may add false positives;
// those only send a module that is never imported.
const IMPORT_RE = /^[ \t]*import[ \t]+([\w., \t]+?)[ \t]*(?:#.*)?$/gm
const FROM_RE = /^[ \t]*from[ \t]+([\w.]+)[ \t]+import\b/gm
const DYNAMIC_RE = /(?:import_module|__import__)\(\s*['"]([\w.]+)['"]/g

export function importedNames(source: string): Set<string> {
  const names = new Set<string>()
  for (const m of source.matchAll(IMPORT_RE)) {
    for (const part of m[1]!.split(',')) {
      const name = part.trim().split(/\s+/)[0]?.split('.')[0]
      if (name) names.add(name)
    }
  }
  for (const m of source.matchAll(FROM_RE)) {
    const name = m[1]!.split('.')[0]
    if (name) names.add(name)
  }
  for (const m of source.matchAll(DYNAMIC_RE)) names.add(m[1]!.split('.')[0]!)
  return names
}

function isGlobal(file: SupportFile | undefined): file is SupportFile & { pythonSource: string } {
  return file !== undefined && file.analysisType === 'global' && typeof file.pythonSource === 'string'
}

/** The repository path a global helper's module is served under (tracebacks and messages name it). */
export function globalFilename(file: SupportFile): string {
  const name = typeof file.data.Filename === 'string' ? file.data.Filename : `${String(file.data.GlobalID)}.py`
  const dir = file.path.includes('/') ? file.path.slice(0, file.path.lastIndexOf('/') + 1) : ''
  return dir + name
}

/** The globals reachable from `source` through imports, by GlobalID. */
export function collectGlobals(source: string, ctx: EngineContext): Record<string, ModuleSource> {
  const found: Record<string, ModuleSource> = {}
  const todo = [...importedNames(source)]
  const seen = new Set<string>(todo)
  while (todo.length > 0) {
    const name = todo.pop()!
    const file = ctx.findSupport(name)
    if (!isGlobal(file)) continue
    found[name] = { filename: globalFilename(file), source: file.pythonSource }
    for (const next of importedNames(file.pythonSource)) {
      if (!seen.has(next)) {
        seen.add(next)
        todo.push(next)
      }
    }
  }
  return found
}
