// One run of a correlation rule over its kept signals (§2.2 rules 5 and 6): which join values
// complete the Group or Sequence. The unit tests ask whether any does; the schedule
// (src/detect/correlation-evaluate.ts) asks for every one, each becoming an alert's dedup.
import { evaluateGroup, type StepTimes } from './evaluate-group.js'
import { evaluateSequence } from './evaluate-sequence.js'
import type { CompiledDetection } from './model.js'
import type { RunSignals } from './signals.js'
import { UNITS_PER_MINUTE } from './timestamps.js'

const NO_TIMES: readonly number[] = []

/**
 * The join values that match, in the order seen; null stands for "a value seen nowhere" (unjoined
 * steps alone satisfy the rule). Candidates: every value seen on a joined step, plus that null one.
 * Each candidate costs O(signals of that value + signals of unjoined steps). `firstOnly` stops at
 * the first match (the unit tests need no more).
 */
export function matchingJoinValues(
  detection: CompiledDetection,
  signals: RunSignals,
  firstOnly = false,
): Array<string | null> {
  if (signals.kind === null) return []
  const unit = UNITS_PER_MINUTE[signals.kind]
  const gaps = detection.gapMinutes.map((g) => g * unit)
  const candidates: Array<string | null> = [...signals.values, null]
  const out: Array<string | null> = []
  for (const value of candidates) {
    const steps: StepTimes[] = detection.steps.map((step, i) => {
      const kept = signals.steps[i]!
      const times =
        step.joinFields.size === 0 ? kept.all : value === null ? NO_TIMES : (kept.byValue.get(value) ?? NO_TIMES)
      return { times, minMatchCount: step.minMatchCount, maxMatchCount: step.maxMatchCount, absent: step.absent }
    })
    const matched =
      detection.shape === 'Group' ? evaluateGroup(steps, detection.groupMinMatchCount) : evaluateSequence(steps, gaps)
    if (matched) {
      out.push(value)
      if (firstOnly) break
    }
  }
  return out
}
