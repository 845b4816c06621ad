// Comparing secrets: byte-wise constant-time equality that never throws (crypto.timingSafeEqual
// throws on unequal lengths, which once made a wrong-length webhook header a 500).
import { timingSafeEqual } from 'node:crypto'

/** Whether `a` and `b` hold the same bytes; unequal lengths are simply unequal. */
export function bytesEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b)
}
