// The reference semantics of §2.2 rule 6, written as literally as possible: try every choice of
// MinMatchCount signals for every present step and check each constraint. Exponential on
// purpose; the property test compares the DP of evaluate-sequence.ts with it on small inputs.
import type { StepTimes } from '../../../src/engine/correlation/evaluate-group.js'

/** Every k-element subset of indices 0..n-1, ascending. */
function* combinations(n: number, k: number, start = 0, prefix: number[] = []): Generator<number[]> {
  if (prefix.length === k) {
    yield prefix
    return
  }
  for (let i = start; i <= n - (k - prefix.length); i++) yield* combinations(n, k, i + 1, [...prefix, i])
}

export function bruteForceSequence(steps: readonly StepTimes[], gaps: readonly number[]): boolean {
  const offset = [0]
  for (let i = 0; i < steps.length - 1; i++) offset.push(offset[i]! + gaps[i]!)
  const distance = (a: number, b: number) => offset[b]! - offset[a]!
  const present = steps.flatMap((s, i) => (s.absent ? [] : [i]))
  if (present.length === 0) return false
  for (const i of present) {
    const s = steps[i]!
    if (s.times.length < s.minMatchCount) return false
    if (s.maxMatchCount !== null && s.times.length > s.maxMatchCount) return false
  }
  const first = new Map<number, number>()
  const done = new Map<number, number>()

  const satisfied = (): boolean => {
    for (let p = 0; p + 1 < present.length; p++) {
      const from = present[p]!
      const to = present[p + 1]!
      if (first.get(to)! < done.get(from)!) return false
      if (first.get(to)! > done.get(from)! + distance(from, to)) return false
    }
    for (let a = 0; a < steps.length; a++) {
      if (!steps[a]!.absent) continue
      const before = present.filter((p) => p < a)
      const after = present.filter((p) => p > a)
      for (const t of steps[a]!.times) {
        if (before.length > 0) {
          const p = before[before.length - 1]!
          if (t >= done.get(p)! && t <= done.get(p)! + distance(p, a)) return false
        } else {
          const q = after[0]!
          if (t >= first.get(q)! - distance(a, q) && t <= first.get(q)!) return false
        }
      }
    }
    return true
  }

  const choose = (p: number): boolean => {
    if (p === present.length) return satisfied()
    const s = steps[present[p]!]!
    for (const chosen of combinations(s.times.length, s.minMatchCount)) {
      const times = chosen.map((i) => s.times[i]!)
      first.set(present[p]!, Math.min(...times))
      done.set(present[p]!, Math.max(...times))
      if (choose(p + 1)) return true
    }
    return false
  }
  return choose(0)
}
