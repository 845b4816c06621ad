// A Python rule's outcomes on a batch as warm workers report them: only the records that matched or
// raised (a worker sends nothing for the rest, which did not match). Detection passes these alone
// (evaluate-records.ts); the dense form, one outcome per record, is kept for the engine's callers
// that want it (tests, the one-shot path's shape).
import type { BatchOutcome, RecordOutcome } from '../engine.js'

/** Records of the batch (positions into its records) that matched or raised; every other one did not match. */
export type SparseOutcome = { outcomes: Map<number, NonNullable<RecordOutcome>> } | { error: string }

/** One outcome per record (null: no match). */
export function denseOutcome(out: SparseOutcome, length: number): BatchOutcome {
  if ('error' in out) return out
  const results = new Array<RecordOutcome>(length).fill(null)
  for (const [i, o] of out.outcomes) results[i] = o
  return { results }
}

/** Sets positions `to[j]` of `into` from a dense outcome's results `j` (a null deletes: no match). */
export function mergeDense(
  into: Map<number, NonNullable<RecordOutcome>>,
  results: readonly RecordOutcome[],
  to: readonly number[],
): void {
  for (const [j, i] of to.entries()) {
    const o = results[j] ?? null
    if (o === null) into.delete(i)
    else into.set(i, o)
  }
}
