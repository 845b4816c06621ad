// Which data models a job carries: for every log type its tests run under (the event's `p_log_type`,
// else a test's `LogType`, else the rule's first `LogTypes` entry), the enabled data model serving it (EngineContext.findDataModel),
// with its mappings and its `.py`. The runner builds `event.udm()` from them (python/panther_core/).
import type { SupportFile } from '../../rules/model.js'
import type { EngineContext } from '../engine.js'
import type { JobDataModel, JobTest } from './protocol.js'

function mappingsOf(model: SupportFile): JobDataModel['mappings'] {
  const raw = Array.isArray(model.data.Mappings) ? (model.data.Mappings as unknown[]) : []
  return raw.flatMap((m): JobDataModel['mappings'] => {
    if (!m || typeof m !== 'object') return []
    const { Name, Path, Method } = m as Record<string, unknown>
    if (typeof Name !== 'string') return []
    if (typeof Path === 'string') return [{ name: Name, path: Path }]
    if (typeof Method === 'string') return [{ name: Name, method: Method }]
    return []
  })
}

/** The data models of the tests' log types, each once, with the log types it serves here. */
export function jobDataModels(
  tests: readonly JobTest[],
  ruleLogTypes: readonly string[],
  ctx: EngineContext,
): JobDataModel[] {
  if (!ctx.findDataModel) return []
  const byPath = new Map<string, JobDataModel>()
  const logTypes = new Set(tests.map((t) => t.logType ?? ruleLogTypes[0]).filter((lt) => lt !== undefined))
  for (const lt of logTypes) {
    const model = ctx.findDataModel(lt)
    if (!model) continue
    const entry = byPath.get(model.path)
    if (entry) {
      entry.logTypes.push(lt)
      continue
    }
    const hasModule = typeof model.pythonSource === 'string'
    byPath.set(model.path, {
      id: String(model.data.DataModelID),
      logTypes: [lt],
      filename: hasModule ? (model.pythonPath ?? String(model.data.Filename)) : null,
      source: hasModule ? model.pythonSource! : null,
      mappings: mappingsOf(model),
    })
  }
  return [...byPath.values()]
}
