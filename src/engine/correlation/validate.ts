// Validation and compilation of a correlation rule's `Detection` block: a list holding one Group or
// Sequence block. Reports every problem at once with its path; returns the compiled detection only
// when there was no error, so the evaluator never sees a half-valid rule.
import { validate as isValidCron } from 'node-cron'
import type { DataPath, RuleProblem } from '../../rules/model.js'
import { DEFAULT_LOOKBACK_MINUTES, type BlockShape, type CompiledDetection, type CompiledStep } from './model.js'
import { checkKeys, describe, positiveInteger, ProblemList } from './problems.js'
import { validateGroupMinMatchCount, validateMatchCriteria } from './validate-group.js'
import { validateTransitions } from './validate-sequence.js'
import { validateSteps } from './validate-steps.js'
import { isPlainObject } from '../../is-plain-object.js'

const COMMON_BLOCK_KEYS = ['LookbackWindowMinutes', 'Schedule', 'EventEvaluationOrder'] as const
const BLOCK_KEYS: Record<BlockShape, readonly string[]> = {
  Group: ['Group', 'MatchCriteria', 'MinMatchCount', ...COMMON_BLOCK_KEYS],
  Sequence: ['Sequence', 'Transitions', ...COMMON_BLOCK_KEYS],
}
const SCHEDULE_KEYS = ['RateMinutes', 'CronExpression', 'TimeoutMinutes'] as const
const EVALUATION_ORDERS = ['Chronological', 'ReverseChronological'] as const

export interface CompileResult {
  /** null when there is any error. */
  detection: CompiledDetection | null
  errors: RuleProblem[]
  warnings: RuleProblem[]
}

/** Validates `data.Detection` (the rule's file form) and compiles it. */
export function compileDetection(data: Readonly<Record<string, unknown>>): CompileResult {
  const out = new ProblemList()
  const detection = compileInto(data.Detection, out)
  return { detection: out.errors.length === 0 ? detection : null, errors: out.errors, warnings: out.warnings }
}

function compileInto(detection: unknown, out: ProblemList): CompiledDetection | null {
  const path: DataPath = ['Detection']
  if (detection === undefined || detection === null) {
    out.error(path, 'Detection is required: a list holding one Group or Sequence block')
    return null
  }
  if (!Array.isArray(detection) || detection.length !== 1) {
    const got = Array.isArray(detection) ? `${detection.length} items` : describe(detection)
    out.error(path, `Detection must be a list holding exactly one Group or Sequence block, got ${got}`)
    if (!Array.isArray(detection) || detection.length === 0) return null
  }
  // With several blocks the first is still checked, so its problems show up in the same pass.
  const block: unknown = detection[0]
  const blockPath = [...path, 0]
  if (!isPlainObject(block)) {
    out.error(blockPath, `a Detection block must be a map with Group or Sequence, got ${describe(block)}`)
    return null
  }
  const hasGroup = block.Group !== undefined
  const hasSequence = block.Sequence !== undefined
  if (hasGroup === hasSequence) {
    out.error(
      blockPath,
      hasGroup
        ? 'a Detection block has either Group or Sequence, not both'
        : 'a Detection block needs Group (unordered members) or Sequence (ordered steps)',
    )
    return null
  }
  const shape: BlockShape = hasGroup ? 'Group' : 'Sequence'
  checkKeys(block, BLOCK_KEYS[shape], blockPath, `a ${shape} block`, out)

  const lookback =
    positiveInteger(block, 'LookbackWindowMinutes', blockPath, `the ${shape} block`, out) ?? DEFAULT_LOOKBACK_MINUTES
  validateSchedule(block.Schedule, [...blockPath, 'Schedule'], out)
  const order = block.EventEvaluationOrder
  if (order !== undefined && !(EVALUATION_ORDERS as readonly unknown[]).includes(order)) {
    out.error(
      [...blockPath, 'EventEvaluationOrder'],
      `EventEvaluationOrder must be ${EVALUATION_ORDERS.join(' or ')}, got ${describe(order)}`,
    )
  }

  const drafts = validateSteps(block[shape], [...blockPath, shape], shape, out)
  let joinFields: Map<number, Set<string>>
  let gapMinutes: number[] = []
  let stepOrder = drafts.map((_, i) => i)
  let groupMin = 0
  if (shape === 'Group') {
    joinFields = validateMatchCriteria(block.MatchCriteria, [...blockPath, 'MatchCriteria'], drafts, out)
    const min = positiveInteger(block, 'MinMatchCount', blockPath, 'the Group block', out)
    groupMin = validateGroupMinMatchCount(min, [...blockPath, 'MinMatchCount'], drafts, out)
  } else {
    const links = validateTransitions(block.Transitions, [...blockPath, 'Transitions'], drafts, lookback, out)
    joinFields = links.joinFields
    gapMinutes = links.gapMinutes
    stepOrder = links.order
  }
  if (out.errors.length > 0) return null
  // A Sequence's steps in the order its transitions give them (a Group keeps its list order).
  const steps: CompiledStep[] = stepOrder
    .map((listIndex) => drafts[listIndex]!)
    .map((d, position) => ({
      id: d.id!,
      ruleId: d.ruleId!,
      index: position,
      minMatchCount: d.minMatchCount,
      maxMatchCount: d.maxMatchCount,
      absent: d.absent,
      joinFields: joinFields.get(d.index) ?? new Set<string>(),
    }))
  return { shape, steps, lookbackMinutes: lookback, groupMinMatchCount: groupMin, gapMinutes }
}

function validateSchedule(schedule: unknown, path: DataPath, out: ProblemList): void {
  if (schedule === undefined || schedule === null) {
    out.error(path, 'Schedule is required: {RateMinutes or CronExpression, TimeoutMinutes}')
    return
  }
  if (!isPlainObject(schedule)) {
    out.error(
      path,
      `Schedule must be a map with RateMinutes or CronExpression, and TimeoutMinutes; got ${describe(schedule)}`,
    )
    return
  }
  checkKeys(schedule, SCHEDULE_KEYS, path, 'Schedule', out)
  const timeout = positiveInteger(schedule, 'TimeoutMinutes', path, 'Schedule', out, true)
  const hasRate = schedule.RateMinutes !== undefined
  const hasCron = schedule.CronExpression !== undefined
  if (hasRate === hasCron) {
    out.error(
      path,
      hasRate
        ? 'Schedule has both RateMinutes and CronExpression; give exactly one'
        : 'Schedule needs RateMinutes or CronExpression',
    )
  }
  if (hasRate) {
    const rate = positiveInteger(schedule, 'RateMinutes', path, 'Schedule', out)
    if (rate !== undefined && timeout !== undefined && rate < timeout) {
      out.error(
        [...path, 'RateMinutes'],
        `RateMinutes (${rate}) must be at least TimeoutMinutes (${timeout}): a run must time out before the next one starts`,
      )
    }
  }
  if (hasCron) {
    const cron = schedule.CronExpression
    // Five fields, as in crontab; node-cron would also take a leading seconds field.
    if (typeof cron !== 'string' || cron.trim().split(/\s+/).length !== 5 || !isValidCron(cron.trim())) {
      out.error(
        [...path, 'CronExpression'],
        `CronExpression must be a five-field cron expression (minute hour day-of-month month day-of-week), got ${describe(cron)}`,
      )
    }
  }
}
