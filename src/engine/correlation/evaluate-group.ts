// Group evaluation for one join value (§2.2 rule 5): order does not matter, only counts inside the
// run's window. Present members need MinMatchCount..MaxMatchCount signals, and at least the
// group-level MinMatchCount of them must be satisfied; any signal of an Absence member fails it.

/** The kept signals of one member or step for one join value, sorted ascending. */
export interface StepTimes {
  times: readonly number[]
  minMatchCount: number
  maxMatchCount: number | null
  absent: boolean
}

export function evaluateGroup(members: readonly StepTimes[], groupMinMatchCount: number): boolean {
  let satisfied = 0
  for (const member of members) {
    const count = member.times.length
    if (member.absent) {
      if (count > 0) return false
    } else if (count >= member.minMatchCount && (member.maxMatchCount === null || count <= member.maxMatchCount)) {
      satisfied++
    }
  }
  return satisfied >= groupMinMatchCount
}
