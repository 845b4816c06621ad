// The stateless half of live detection: a chunk of stored records is evaluated (offloadable rules
// on the rule worker when there is one, a chunk's batch rules and the rest in-process:
// evaluate-records.ts), then passed in stored order, each rule's answer on each record becoming
// nothing, a rule error or a match handed to the alert book (alert-book.ts), which groups it. The
// loop (detector.ts) starts a chunk here and finishes it when its turn in stored order comes.
import { TurnBudget } from '../turn-budget.js'
import type { AlertBook } from './alert-book.js'
import type { RuleErrorRecord } from './detection-ledger.js'
import { type ChunkTerms, evaluateRecords, type RecordEvaluations } from './evaluate-records.js'
import type { Evaluation, LiveIndex, LiveRule } from './live-rules.js'
import type { OffloadedChunk, RuleWorker } from './rule-worker.js'
import type { StoredRecord } from './stored-log.js'

/** A chunk whose evaluation is under way. */
export interface StartedChunk {
  chunk: StoredRecord[]
  live: LiveIndex
  /** Rule errors of rules that do not compile, for a revision first used by this chunk. */
  broken: RuleErrorRecord[]
  evaluations: Promise<[OffloadedChunk | null, RecordEvaluations]>
}

/** Where a chunk's output goes (the alert book's queue). */
export type ChunkOutput = Pick<AlertBook, 'addError' | 'addMatch'>

/** Records and rule evaluations passed: the loop moves its metrics once per commit. */
export interface PassCounts {
  records: number
  evaluations: number
}

/** Starts a chunk's evaluation with the rules served when it starts (a later revision applies to the next). */
export function startChunk(
  chunk: StoredRecord[],
  rules: { live: LiveIndex; broken: RuleErrorRecord[] },
  worker: RuleWorker | null,
  terms: ChunkTerms = {},
): StartedChunk {
  const { live } = rules
  const evaluations = Promise.all([
    worker?.evaluate(
      live,
      chunk.map((rec) => rec.line),
    ) ?? null,
    evaluateRecords(live, chunk, undefined, terms),
  ])
  evaluations.catch(() => {}) // awaited by passChunk's caller, unless the run stops first
  return { chunk, live, broken: rules.broken, evaluations }
}

/**
 * A chunk's pass in stored order: rule errors, then each record's answers (matches grouped by the
 * book). It gives the event loop back every `budget` slice (a chunk of thousands of matches with large
 * alert contexts is seconds of work: requests, ingest and /healthz are answered between slices).
 */
export async function passChunk(
  s: StartedChunk,
  [offloaded, evaluations]: [OffloadedChunk | null, RecordEvaluations],
  out: ChunkOutput,
  counted: PassCounts,
  budget: TurnBudget = new TurnBudget(),
): Promise<void> {
  for (const e of s.broken) out.addError(e)
  const time = new Date().toISOString()
  for (const { rule, error } of evaluations.failed)
    out.addError({ ruleId: rule.meta.id, revision: rule.meta.revision, time, record: null, error })
  const { chunk, live } = s
  for (let i = 0; i < chunk.length; i++) {
    passRecord(chunk[i]!, i, live, evaluations, offloaded, out, counted)
    if ((i & 15) === 15) await budget.pass()
  }
}

function passRecord(
  rec: StoredRecord,
  i: number,
  live: LiveIndex,
  evaluations: RecordEvaluations,
  offloaded: OffloadedChunk | null,
  out: ChunkOutput,
  counted: PassCounts,
): void {
  const logType = rec.logType
  const rules = live.byLogType.get(logType)
  counted.records++
  if (!rules) return
  const now = Date.now()
  counted.evaluations += rules.length
  const covered = offloaded?.covered.get(logType)
  const hits = offloaded?.hits[i]
  const skips = evaluations.skips
  if (covered?.all) {
    // Every rule of the log type ran on the worker: only its answers other than "no match".
    if (hits)
      for (const [slot, answer] of hits) if (!skips?.(rules[slot]!, i)) outcome(rec, rules[slot]!, answer, now, out)
    return
  }
  // The batch rules' matches and errors on this record, in the rules' order; every other answer of
  // theirs is "no match" (no lookup per rule and record).
  const batchHits = evaluations.hitsAt?.(i)
  if (batchOnly(rules)) {
    // Only batch (Python) rules here: a damaged line was given to none, so it has no hits either.
    if (batchHits) for (const [rule, answer] of batchHits) if (!skips?.(rule, i)) outcome(rec, rule, answer, now, out)
    return
  }
  if (!rec.readable) return // a damaged line: never evaluated (the worker skips it too)
  let h = 0
  let b = 0
  for (let slot = 0; slot < rules.length; slot++) {
    const rule = rules[slot]!
    let answer: Evaluation
    if (covered?.slots[slot]) {
      if (hits === undefined || h >= hits.length || hits[h]![0] !== slot) continue
      answer = hits[h++]![1]
      if (skips?.(rule, i)) continue
    } else if (rule.batch && evaluations.hitsAt) {
      if (batchHits === undefined || b >= batchHits.length || batchHits[b]![0] !== rule) continue
      answer = batchHits[b++]![1]
      if (skips?.(rule, i)) continue
    } else if (skips?.(rule, i)) continue
    else answer = evaluations.of(rule, i, rec.record)
    outcome(rec, rule, answer, now, out)
  }
}

// Whether a log type's rules are all batch rules (the list is the live index's, fixed per revision).
const batchOnlyLists = new WeakMap<readonly LiveRule[], boolean>()

function batchOnly(rules: readonly LiveRule[]): boolean {
  let only = batchOnlyLists.get(rules)
  if (only === undefined) batchOnlyLists.set(rules, (only = rules.every((r) => r.batch !== undefined)))
  return only
}

/** One rule's answer on one record: a rule error, nothing, or a match. */
export function outcome(rec: StoredRecord, rule: LiveRule, answer: Evaluation, now: number, out: ChunkOutput): void {
  if ('error' in answer) {
    out.addError(recordError(rec, rule, now, answer.error))
    return
  }
  if (!answer.matched) return
  // Alert functions that raised: the match stands (Panther's fallbacks), each error is reported.
  for (const error of answer.errors ?? []) out.addError(recordError(rec, rule, now, error))
  out.addMatch(rec, rule.meta, answer, now)
}

function recordError(rec: StoredRecord, rule: LiveRule, now: number, error: string): RuleErrorRecord {
  return {
    ruleId: rule.meta.id,
    revision: rule.meta.revision,
    time: new Date(now).toISOString(),
    record: { partition: rec.file, offset: rec.offset },
    error,
  }
}
