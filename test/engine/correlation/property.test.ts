// Property test: on thousands of small random sequences (seeded, so failures reproduce), the DP
// evaluator gives exactly the result of an exhaustive search over every choice of signals.
import t from 'tap'
import type { StepTimes } from '../../../src/engine/correlation/evaluate-group.js'
import { evaluateSequence } from '../../../src/engine/correlation/evaluate-sequence.js'
import { bruteForceSequence } from './brute-force.js'

/** mulberry32: a tiny seeded PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let x = Math.imul(a ^ (a >>> 15), 1 | a)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

const CASES = 4000

t.test(`the DP equals exhaustive search on ${CASES} random sequences`, async (t) => {
  const random = prng(20261121)
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1))
  let matched = 0
  let mismatches = 0
  for (let c = 0; c < CASES; c++) {
    const n = int(2, 4)
    const steps: StepTimes[] = Array.from({ length: n }, () => {
      const min = int(1, 3)
      const times = Array.from({ length: int(0, 6) }, () => int(0, 24)).sort((a, b) => a - b)
      return {
        times,
        minMatchCount: min,
        maxMatchCount: random() < 0.2 ? int(min, min + 2) : null,
        absent: random() < 0.3,
      }
    })
    if (steps.every((s) => s.absent)) steps[int(0, n - 1)]!.absent = false
    const gaps = Array.from({ length: n - 1 }, () => int(0, 10))
    const expected = bruteForceSequence(steps, gaps)
    const actual = evaluateSequence(steps, gaps)
    if (expected) matched++
    if (actual !== expected) {
      mismatches++
      if (mismatches <= 5) t.fail(`case ${c}: DP ${actual}, exhaustive ${expected}: ${JSON.stringify({ steps, gaps })}`)
    }
  }
  t.equal(mismatches, 0, 'no mismatch')
  // Guard against a generator that only ever produces one answer.
  t.ok(matched > CASES / 10 && matched < (CASES * 9) / 10, `both outcomes are exercised (${matched} matches)`)
})
