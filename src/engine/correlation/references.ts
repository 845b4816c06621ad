// What a correlation rule refers to: the `RuleID`s of its Detection block, and the log types they
// cover (simple rules, Python streaming rules, and recursively other correlation rules). Works on
// any file form, valid or not, and never recurses without bound: a walk with its own stack.
import type { DataPath, RuleFile, RuleProblem } from '../../rules/model.js'
import type { EngineContext } from '../engine.js'
import { isPlainObject } from '../../is-plain-object.js'

export const DANGLING_REFERENCE = 'DanglingReference'
const REFERENCE_CYCLE = 'ReferenceCycle'

/** Support-file analysis types that are rules producing signals (others are globals, queries…). */
const SIGNAL_ANALYSIS_TYPES = new Set(['rule', 'scheduled_rule', 'correlation_rule'])

interface ReferenceEntry {
  id: string
  path: DataPath
}

/** Every `RuleID` of the Detection block with its path, first appearance only. */
function referenceEntries(data: Readonly<Record<string, unknown>>): ReferenceEntry[] {
  const entries: ReferenceEntry[] = []
  const seen = new Set<string>()
  const detection = data.Detection
  if (!Array.isArray(detection)) return entries
  detection.forEach((block: unknown, b) => {
    if (!isPlainObject(block)) return
    for (const shape of ['Group', 'Sequence'] as const) {
      const steps = block[shape]
      if (!Array.isArray(steps)) continue
      steps.forEach((step: unknown, s) => {
        if (!isPlainObject(step)) return
        const id = step.RuleID
        if (typeof id !== 'string' || id === '' || seen.has(id)) return
        seen.add(id)
        entries.push({ id, path: ['Detection', b, shape, s, 'RuleID'] })
      })
    }
  })
  return entries
}

/** The `RuleID`s the detection references, in first-appearance order, without duplicates. */
export function correlationReferenceIds(data: Readonly<Record<string, unknown>>): string[] {
  return referenceEntries(data).map((e) => e.id)
}

function declaredLogTypes(data: Readonly<Record<string, unknown>>): string[] {
  const logTypes = data.LogTypes
  return Array.isArray(logTypes) ? logTypes.filter((t): t is string => typeof t === 'string') : []
}

interface Frame {
  id: string
  refs: string[]
  next: number
}

/**
 * The sorted union of the log types of every rule the correlation rule reaches. Problems: a direct
 * reference to no rule (code DanglingReference) and a cycle back to this rule (code ReferenceCycle).
 * A dangling reference or a cycle further down belongs to the rule that holds it and is not repeated.
 */
export function resolveCorrelationLogTypes(
  rule: RuleFile,
  ctx: EngineContext,
): { logTypes: string[]; problems: RuleProblem[] } {
  const logTypes = new Set<string>()
  const problems: RuleProblem[] = []
  // Each rule is expanded once: the union does not depend on the path that reached it.
  const expanded = new Set<string>([rule.id])
  for (const entry of referenceEntries(rule.data)) {
    const reported = new Set<string>()
    const stack: Frame[] = [{ id: rule.id, refs: [entry.id], next: 0 }]
    while (stack.length > 0) {
      const frame = stack[stack.length - 1]!
      if (frame.next >= frame.refs.length) {
        stack.pop()
        continue
      }
      const id = frame.refs[frame.next++]!
      const direct = stack.length === 1
      if (id === rule.id) {
        const chain = [...stack.map((f) => f.id), id].join(' → ')
        if (!reported.has(chain)) {
          reported.add(chain)
          problems.push({
            path: entry.path,
            message: `reference cycle: ${chain}; a correlation rule cannot depend on its own signals`,
            code: REFERENCE_CYCLE,
          })
        }
        continue
      }
      const target = ctx.findRule(id)
      if (target !== undefined) {
        if (target.kind !== 'correlation') {
          for (const t of declaredLogTypes(target.data)) logTypes.add(t)
        } else if (!expanded.has(id)) {
          expanded.add(id)
          stack.push({ id, refs: correlationReferenceIds(target.data), next: 0 })
        }
        continue
      }
      const support = ctx.findSupport(id)
      if (support !== undefined && SIGNAL_ANALYSIS_TYPES.has(support.analysisType)) {
        for (const t of declaredLogTypes(support.data)) logTypes.add(t)
        continue
      }
      if (!direct) continue
      problems.push({
        path: entry.path,
        message:
          support === undefined
            ? `RuleID "${id}" names no rule in the repository`
            : `RuleID "${id}" names a ${support.analysisType} file (${support.path}), not a rule`,
        code: DANGLING_REFERENCE,
      })
    }
  }
  return { logTypes: [...logTypes].sort(), problems }
}
