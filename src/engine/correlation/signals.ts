// From a test's `RuleOutputs` to the signals one run sees: every (step, field, value, time), minus
// signals of joined steps on fields they do not join on (reported as warnings), kept only inside
// the lookback window ending at the latest signal, grouped by join value and sorted by time.
import type { CompiledDetection } from './model.js'
import { describe } from './problems.js'
import { parseTimestamp, UNITS_PER_MINUTE, type TimeKind } from './timestamps.js'
import { isPlainObject } from '../../is-plain-object.js'

/** The kept signals of one step: by join value (joined steps) or all of them (unjoined steps). */
interface StepSignals {
  byValue: Map<string, number[]>
  all: number[]
}

export interface RunSignals {
  /** The unit of every time below; null when the test has no signal at all. */
  kind: TimeKind | null
  /** Per step index, sorted ascending. */
  steps: StepSignals[]
  /** Every join value seen on a kept signal of a joined step. */
  values: Set<string>
}

export interface CollectResult {
  signals: RunSignals | null
  errors: string[]
  warnings: string[]
}

/** One signal: its step's index, its join value (ignored for unjoined steps), its time in the kind's unit. */
export interface RawSignal {
  step: number
  value: string
  time: number
}

/** More problems than this in one test are summarised, so one bad test cannot flood the output. */
const MAX_MESSAGES = 10

export function collectSignals(detection: CompiledDetection, ruleOutputs: unknown): CollectResult {
  const errors: string[] = []
  const warnings: string[] = []
  const raw: RawSignal[] = []
  const kinds = new Map<TimeKind, string>()
  const noun = detection.shape === 'Group' ? 'member' : 'step'
  const names = detection.steps.map((s) => JSON.stringify(s.id)).join(', ')
  const stepById = new Map(detection.steps.map((s) => [s.id, s]))

  if (ruleOutputs !== undefined && ruleOutputs !== null && !Array.isArray(ruleOutputs)) {
    errors.push(`RuleOutputs must be a list of {ID, Matches}, got ${describe(ruleOutputs)}`)
  }
  const outputs: unknown[] = Array.isArray(ruleOutputs) ? ruleOutputs : []
  outputs.forEach((output, i) => {
    const where = `RuleOutputs[${i}]`
    if (!isPlainObject(output)) {
      errors.push(`${where} must be a map with ID and Matches, got ${describe(output)}`)
      return
    }
    const id = output.ID
    const step = typeof id === 'string' ? stepById.get(id) : undefined
    if (step === undefined) {
      errors.push(
        typeof id === 'string'
          ? `${where}: ID "${id}" names no ${noun} of this rule (${noun}s: ${names})`
          : `${where}: ID must be the ID of a ${noun} (${names}), got ${describe(id)}`,
      )
      return
    }
    const matches = output.Matches
    if (matches === undefined || matches === null) return
    if (!isPlainObject(matches)) {
      errors.push(
        `${where} (${noun} "${step.id}"): Matches must be a map field → value → [time, …], got ${describe(matches)}`,
      )
      return
    }
    for (const [field, byValue] of Object.entries(matches)) {
      if (!isPlainObject(byValue)) {
        errors.push(`${where}.Matches["${field}"] must be a map value → [time, …], got ${describe(byValue)}`)
        continue
      }
      const joined = step.joinFields.size > 0
      const dropped = joined && !step.joinFields.has(field)
      let droppedCount = 0
      for (const [value, times] of Object.entries(byValue)) {
        if (!Array.isArray(times)) {
          errors.push(`${where}.Matches["${field}"]["${value}"] must be a list of timestamps, got ${describe(times)}`)
          continue
        }
        for (const rawTime of times as unknown[]) {
          const parsed = parseTimestamp(rawTime)
          if ('error' in parsed) {
            errors.push(`${where}.Matches["${field}"]["${value}"]: ${parsed.error}`)
            continue
          }
          if (!kinds.has(parsed.kind)) kinds.set(parsed.kind, `${where}.Matches["${field}"]["${value}"]`)
          if (dropped) droppedCount++
          else raw.push({ step: step.index, value, time: parsed.value })
        }
      }
      if (droppedCount > 0) {
        const on = [...step.joinFields].map((f) => JSON.stringify(f)).join(', ')
        warnings.push(
          `${where} (${noun} "${step.id}"): ${droppedCount} signal${droppedCount === 1 ? '' : 's'} of field "${field}" ignored: ${noun} "${step.id}" joins only on ${on}`,
        )
      }
    }
  })
  if (kinds.size > 1) {
    errors.push(
      `timestamps mix integer minutes (first in ${kinds.get('minutes')}) and RFC 3339 strings (first in ${kinds.get('rfc3339')}); use one kind per test`,
    )
  }
  if (errors.length > MAX_MESSAGES) {
    const more = errors.length - MAX_MESSAGES
    errors.splice(MAX_MESSAGES, more, `… and ${more} more problem${more === 1 ? '' : 's'}`)
  }
  if (errors.length > 0) return { signals: null, errors, warnings }
  const kind = kinds.size === 0 ? null : [...kinds.keys()][0]!
  return { signals: keepLookback(detection, raw, kind), errors, warnings }
}

/** One run at R = the latest kept signal: keeps R − L ≤ t ≤ R, grouped and sorted. */
function keepLookback(detection: CompiledDetection, raw: RawSignal[], kind: TimeKind | null): RunSignals {
  if (kind === null || raw.length === 0) return keepWindow(detection, [], kind, 0, 0)
  let latest = -Infinity
  for (const s of raw) if (s.time > latest) latest = s.time
  return keepWindow(detection, raw, kind, latest - detection.lookbackMinutes * UNITS_PER_MINUTE[kind], latest)
}

/**
 * The signals of one run with `earliest ≤ t ≤ latest`, grouped by join value and sorted: the unit
 * tests' run ends at their latest signal; a scheduled run (src/detect) at its evaluation time.
 */
export function keepWindow(
  detection: CompiledDetection,
  raw: readonly RawSignal[],
  kind: TimeKind | null,
  earliest: number,
  latest: number,
): RunSignals {
  const steps: StepSignals[] = detection.steps.map(() => ({ byValue: new Map(), all: [] }))
  const values = new Set<string>()
  if (kind === null || raw.length === 0) return { kind, steps, values }
  for (const s of raw) {
    if (s.time < earliest || s.time > latest) continue
    const target = steps[s.step]!
    if (detection.steps[s.step]!.joinFields.size === 0) {
      target.all.push(s.time)
      continue
    }
    values.add(s.value)
    let list = target.byValue.get(s.value)
    if (list === undefined) target.byValue.set(s.value, (list = []))
    list.push(s.time)
  }
  const ascending = (a: number, b: number) => a - b
  for (const step of steps) {
    step.all.sort(ascending)
    for (const list of step.byValue.values()) list.sort(ascending)
  }
  return { kind, steps, values }
}
