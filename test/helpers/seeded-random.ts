// Test helper: the one seeded PRNG of the tests (mulberry32: tiny, fast, the same sequence on every
// machine), so a generated case that fails reproduces from its seed, and SeededRandom, the small
// draws the generators make from it (int, pick, bool, str, shuffle).

export type Random = () => number

/** mulberry32: a number in [0, 1) per call, determined by the seed alone. */
export function mulberry32(seed: number): Random {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let x = Math.imul(a ^ (a >>> 15), 1 | a)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

export class SeededRandom {
  readonly next: Random
  constructor(seed: number) {
    this.next = mulberry32(seed)
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n)
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!
  }
  bool(p = 0.5): boolean {
    return this.next() < p
  }
  str(len: number, alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'): string {
    let s = ''
    for (let i = 0; i < len; i++) s += alphabet[this.int(alphabet.length)]
    return s
  }
  /** Shuffles `xs` in place (Fisher–Yates) and returns it. */
  shuffle<T>(xs: T[]): T[] {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = this.int(i + 1)
      ;[xs[i], xs[j]] = [xs[j]!, xs[i]!]
    }
    return xs
  }
}
