// Sequence evaluation for one join value (§2.2 rule 6), exact yet linear after sorting: a DP whose
// states are the possible completion times of each present step, at most one per signal. The key
// fact: with m ≥ 2 required signals a step can complete at its k-th signal iff some allowed first
// signal has index j ≤ k − m + 1 (the m − 2 others fit between); with m = 1, iff k itself is allowed.
import type { StepTimes } from './evaluate-group.js'

/**
 * steps: in sequence order (the transitions', §5.2); gaps[i]: the window (in the times' unit) from step i to step i + 1.
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
  const leadInClear = firstTimes.map((f) => {
    for (let a = 0; a < first; a++) {
      if (steps[a]!.absent && anyIn(steps[a]!.times, f - (offset[first]! - offset[a]!), f)) return false
    }
    return true
  })
  let completions = completionTimes(firstTimes, steps[first]!.minMatchCount, leadInClear)

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
    // times[j] may start the step iff it lies in some [done, done + window]; both lists ascend, so
    // the latest done ≤ times[j] decides, found with a pointer that only moves forward.
    const allowed: boolean[] = new Array<boolean>(times.length)
    let c = 0
    for (let j = 0; j < times.length; j++) {
      const t = times[j]!
      while (c + 1 < valid.length && valid[c + 1]! <= t) c++
      allowed[j] = valid[c]! <= t && t <= valid[c]! + window
    }
    completions = completionTimes(times, steps[to]!.minMatchCount, allowed)
  }
  return false
}

/** The times at which a step needing `m` signals can complete, given which signals may start it. */
function completionTimes(times: readonly number[], m: number, allowed: readonly boolean[]): number[] {
  if (m === 1) return times.filter((_, j) => allowed[j])
  const jmin = allowed.indexOf(true)
  return jmin < 0 ? [] : times.slice(jmin + m - 1)
}

/** Whether a sorted list holds a value in [lo, hi]. */
function anyIn(sorted: readonly number[], lo: number, hi: number): boolean {
  let low = 0
  let high = sorted.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if (sorted[mid]! < lo) low = mid + 1
    else high = mid
  }
  return low < sorted.length && sorted[low]! <= hi
}
