// A binary search over a sorted sequence: the first index at which `before` stops holding (every
// index below it is "before" the value sought, none from it on), in O(log n) calls.

export function partitionPoint(length: number, before: (i: number) => boolean): number {
  let lo = 0
  let hi = length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (before(mid)) lo = mid + 1
    else hi = mid
  }
  return lo
}
