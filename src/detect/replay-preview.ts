// A preview's rules (POST /replay/preview): the served revision with one unsaved rule in place of the
// rule of its id (or beside the others when it is new), so a replay runs the rule being edited with
// the revision's globals, data models and helpers, as it would run once saved. Nothing is published:
// the served index is not touched (only its map of rules is copied).
import type { LiveEngines } from '../engine/engine.js'
import { badRequest } from '../errors.js'
import { fileDataToView } from '../rules/mapping.js'
import type { RuleFile } from '../rules/model.js'
import { type IndexedRule, RuleIndex } from '../rules/rule-index.js'
import { searchKeys } from '../service/file-records.js'

/** The served index with `rule` (checked already: prepareRule) served under its id. */
export function previewIndex(served: RuleIndex, rule: RuleFile, engines: LiveEngines): RuleIndex {
  if (!engines[rule.kind]?.live)
    throw badRequest(
      `a ${rule.kind} rule does not run over stored events (detection runs it otherwise): it cannot be previewed`,
    )
  const before = served.rules.get(rule.id)
  const view = fileDataToView(rule.kind, rule.data, rule.pythonSource)
  const indexed: IndexedRule = {
    kind: rule.kind,
    id: rule.id,
    path: before?.path ?? '',
    pythonPath: before?.pythonPath,
    file: { ...rule, path: before?.path ?? rule.path },
    view,
    search: searchKeys(rule.id, view),
    warnings: [],
  }
  const rules = new Map(served.rules)
  rules.set(rule.id, indexed)
  return new RuleIndex(
    served.revision,
    served.files,
    rules,
    served.supports,
    served.holders,
    served.sorted,
    served.folded,
  )
}
