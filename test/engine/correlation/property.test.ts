// Property tests (seeded, so failures reproduce): on thousands of small random sequences the DP
// gives exactly the result of an exhaustive search over every choice of signals, and whole test
// runs (join fields, dropped signals, lookback, every join value) equal a literal reading of §2.2.
import t from 'tap'
import type { StepTimes } from '../../../src/engine/correlation/evaluate-group.js'
import { evaluateSequence } from '../../../src/engine/correlation/evaluate-sequence.js'
import { runCorrelationTest } from '../../../src/engine/correlation/run-tests.js'
import { mulberry32 } from '../../helpers/seeded-random.js'
import { bruteForceSequence } from './brute-force.js'
import { compiled, groupData, link, sequenceData } from './helpers.js'

const CASES = 4000

t.test(`the DP equals exhaustive search on ${CASES} random sequences`, async (t) => {
  const random = mulberry32(20261121)
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

const RUNS = 1500

t.test(`whole test runs equal a literal reading of §2.2 on ${RUNS} random rules and signals`, async (t) => {
  const random = mulberry32(4242)
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1))
  const VALUES = ['a', 'b', 'c']
  let matched = 0
  let mismatches = 0
  for (let c = 0; c < RUNS; c++) {
    const n = int(2, 4)
    const shape = random() < 0.5 ? 'Group' : 'Sequence'
    const ids = Array.from({ length: n }, (_, i) => `S${i}`)
    const steps = ids.map((id) => ({
      ID: id,
      RuleID: `R.${id}`,
      MinMatchCount: int(1, 2),
      ...(random() < 0.25 ? { Absence: true } : {}),
    }))
    if (steps.every((s) => s.Absence)) delete (steps[0] as { Absence?: boolean }).Absence
    const lookback = int(5, 20)
    const joined = ids.filter(() => random() < 0.7)
    const data =
      shape === 'Group'
        ? groupData(steps, joined, { LookbackWindowMinutes: lookback })
        : sequenceData(
            steps,
            ids
              .slice(1)
              .flatMap((to, i) =>
                joined.includes(ids[i]!) && joined.includes(to) ? [link(ids[i]!, to, int(1, 10))] : [],
              ),
            { LookbackWindowMinutes: lookback },
          )
    // A Group with no joined member has no MatchCriteria at all (an empty one is invalid).
    if (joined.length === 0) delete (data.Detection as Array<Record<string, unknown>>)[0]!.MatchCriteria
    const detection = compiled(data)
    // Signals: a few per step on the join field or on another field, values a–c, times 0–20.
    const outputs = ids.map((id) => {
      const matches: Record<string, Record<string, number[]>> = {}
      for (let k = int(1, 6); k > 0; k--) {
        const field = random() < 0.85 ? 'user' : 'other'
        ;((matches[field] ??= {})[VALUES[int(0, 2)]!] ??= []).push(int(0, 20))
      }
      return { ID: id, Matches: matches }
    })
    const actual = runCorrelationTest(detection, { Name: 'p', ExpectedResult: true, RuleOutputs: outputs }, 0).actual

    // The literal reading: drop, anchor R, keep [R − L, R], then try every value (and one unseen).
    const kept = outputs.flatMap((o, s) =>
      Object.entries(o.Matches).flatMap(([field, byValue]) =>
        Object.entries(byValue).flatMap(([value, times]) => {
          const fields = detection.steps[s]!.joinFields
          return fields.size > 0 && !fields.has(field) ? [] : times.map((time) => ({ s, value, time }))
        }),
      ),
    )
    const latest = Math.max(...kept.map((k) => k.time))
    const inWindow = kept.filter((k) => k.time >= latest - lookback)
    const expected =
      inWindow.length > 0 &&
      [...VALUES, 'unseen'].some((v) => {
        const stepTimes: StepTimes[] = detection.steps.map((st, s) => ({
          times: inWindow
            .filter((k) => k.s === s && (st.joinFields.size === 0 || k.value === v))
            .map((k) => k.time)
            .sort((a, b) => a - b),
          minMatchCount: st.minMatchCount,
          maxMatchCount: st.maxMatchCount,
          absent: st.absent,
        }))
        if (shape === 'Sequence') return bruteForceSequence(stepTimes, detection.gapMinutes)
        if (stepTimes.some((st) => st.absent && st.times.length > 0)) return false
        return (
          stepTimes.filter((st) => !st.absent && st.times.length >= st.minMatchCount).length >=
          detection.groupMinMatchCount
        )
      })
    if (expected) matched++
    if (actual !== expected) {
      mismatches++
      if (mismatches <= 5)
        t.fail(`run ${c}: engine ${actual}, literal ${expected}: ${JSON.stringify({ data, outputs })}`)
    }
  }
  t.equal(mismatches, 0, 'no mismatch')
  t.ok(matched > RUNS / 10 && matched < (RUNS * 9) / 10, `both outcomes are exercised (${matched} matches)`)
})
