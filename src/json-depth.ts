// How deeply a parsed JSON value nests, checked without recursion: values that rule code reports
// (through a result pipe it can write itself) are parsed by V8's iterative JSON.parse but written
// back by the recursive JSON.stringify, which overflows its stack near 10,000 levels.

/** How deeply reported values may nest (Python's json cannot write deeper under its recursion limit). */
export const MAX_JSON_DEPTH = 1000

/** Whether `value` nests at most `max` arrays/objects deep. */
export function nestedWithin(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]]
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!
    if (v === null || typeof v !== 'object') continue
    if (depth + 1 > max) return false
    for (const child of Object.values(v)) stack.push([child, depth + 1])
  }
  return true
}
