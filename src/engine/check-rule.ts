// Every problem of one rule at once: its structural problems (keys, schema: rules/rule-file.ts)
// and its language problems (the kind's engine check), used by the loaders (the index, the CLI)
// and by API writes alike. The engine checks even a structurally invalid rule; a language problem
// already said by a structural one (same place or inside it) is left out, so each is said once.
import type { DataPath, RuleFile, RuleProblem } from '../rules/model.js'
import type { CheckResult, EngineContext, RuleEngine } from './engine.js'

const within = (path: DataPath, outer: DataPath) =>
  outer.length > 0 && outer.length <= path.length && outer.every((p, i) => p === path[i])

export function checkRule(
  rule: RuleFile,
  structural: readonly RuleProblem[],
  engine: RuleEngine | undefined,
  ctx: EngineContext,
): CheckResult {
  const errors = [...structural]
  if (!engine) return { errors, warnings: [] }
  let checked: CheckResult
  try {
    checked = engine.check(rule, ctx)
  } catch (err) {
    // Engines check any file form; should one not cope with a structurally broken file, the
    // structural problems already make it invalid.
    if (structural.length > 0) return { errors, warnings: [] }
    throw err
  }
  const said = (p: RuleProblem) => structural.some((s) => within(p.path, s.path))
  errors.push(...checked.errors.filter((p) => !said(p)))
  return { errors, warnings: checked.warnings.filter((p) => !said(p)) }
}
