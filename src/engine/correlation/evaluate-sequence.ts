// Sequence evaluation for one join value (§2.2 rule 6), exact yet linear after sorting: a DP whose
// states are the possible completion times of each present step, at most one per signal. The key
// fact: a step with m required signals can complete at its k-th signal iff some allowed first
// signal has index ≤ k − m + 1, so its completions are always a suffix of its signals.
import type { StepTimes } from './evaluate-group.js'

/**
 * steps: in list order; gaps[i]: the window (in the times' unit) from step i to step i + 1.
 * Between two present steps with absent steps in between, the window is the sum of the links.
 */
export function evaluateSequence(steps: readonly StepTimes[], gaps: readonly number[]): boolean {
  // offset[i]: the summed windows from step 0 to step i, so a distance is offset[b] − offset[a].
  const offset = [0]
  for (let i = 0; i < steps.length - 1; i++) offset.push(offset[i]! + gaps[i]!)
  const present: number[] = []
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i]!
    if (step.absent) continue
    const count = step.times.length
    if (count < step.minMatchCount) return false
    if (step.maxMatchCount !== null && count > step.maxMatchCount) return false
    present.push(i)
  }
  if (present.length === 0) return false

  // The first present step: its first signal f may be any whose lead-in has no absent signal.
  const first = present[0]!
  const firstTimes = steps[first]!.times
  let jmin = -1
  for (let j = 0; j < firstTimes.length && jmin < 0; j++) {
    const f = firstTimes[j]!
    let clear = true
    for (let a = 0; a < first && clear; a++) {
      if (steps[a]!.absent && anyIn(steps[a]!.times, f - (offset[first]! - offset[a]!), f)) clear = false
    }
    if (clear) jmin = j
  }
  if (jmin < 0) return false
  let completions = firstTimes.slice(jmin + steps[first]!.minMatchCount - 1)

  for (let p = 0; p < present.length; p++) {
    const from = present[p]!
    const to = present[p + 1]
    // A completion survives if no absent step after it (up to the next present one) fires in its window.
    const end = to ?? steps.length
    const valid: number[] = []
    for (const done of completions) {
      let clear = true
      for (let a = from + 1; a < end && clear; a++) {
        if (anyIn(steps[a]!.times, done, done + (offset[a]! - offset[from]!))) clear = false
      }
      if (clear) valid.push(done)
    }
    if (valid.length === 0) return false
    if (to === undefined) return true
    const window = offset[to]! - offset[from]!
    const times = steps[to]!.times
    // Smallest j with times[j] in some [done, done + window]: both lists ascending, two pointers.
    let next = -1
    let c = 0
    for (let j = 0; j < times.length; j++) {
      const t = times[j]!
      while (c + 1 < valid.length && valid[c + 1]! <= t) c++
      if (valid[c]! <= t && t <= valid[c]! + window) {
        next = j
        break
      }
    }
    if (next < 0) return false
    completions = times.slice(next + steps[to]!.minMatchCount - 1)
    if (completions.length === 0) return false
  }
  return false
}

/** Whether a sorted list holds a value in [lo, hi]. */
export function anyIn(sorted: readonly number[], lo: number, hi: number): boolean {
  let low = 0
  let high = sorted.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if (sorted[mid]! < lo) low = mid + 1
    else high = mid
  }
  return low < sorted.length && sorted[low]! <= hi
}
