// A warm worker's batch in blocks (warm-worker.ts): every rule over a block of BLOCK_RECORDS records
// before the next block, each block a batch line of its own (rule by rule over 5,000 records, the
// event objects fell out of the CPU's cache between rules). What one rule did in a batch, its
// progress over the blocks (a block's run merged into its batch's: indexes shifted, its budget,
// share and stops its whole batch's), and the JSON text of a block, made once for every worker.
import type { RecordOutcome } from '../engine.js'
import type { ServePlanItem } from './protocol.js'

/** What a rule did in one batch of a worker. */
export interface RuleRun {
  k: number
  /** Outcomes of the records that matched or raised (by index into the item's records). */
  results: Map<number, RecordOutcome>
  /** Records stopped at their own clock: index → why. */
  stopped: Map<number, string>
  /** Records known to be done (all before this index). */
  reached: number
  /** Why the rule cannot run at all (import, data model). */
  setup?: string
  /** How the rule's run ended early: too many stopped records, its budget, or the process killed/dead. */
  end?: { why: 'stops' | 'budget' | 'evicted' | 'killed' | 'crashed'; message: string }
  /** Wall time between its start and end frames (all its blocks together). */
  ms: number
}

/** Records of a batch per block: each rule runs over one block, then the next rule (see the header). */
export const BLOCK_RECORDS = 512

// The JSON text of a block of an array of records, made once for every worker it is sent to.
const blockTexts = new WeakMap<readonly object[], Map<number, string>>()

export function blockJson(records: readonly object[], from: number, to: number): string {
  let texts = blockTexts.get(records)
  if (!texts) blockTexts.set(records, (texts = new Map()))
  let text = texts.get(from)
  if (text === undefined)
    texts.set(from, (text = JSON.stringify(from === 0 && to >= records.length ? records : records.slice(from, to))))
  return text
}

/** A rule's progress over the blocks of a batch. */
export interface Progress {
  item: ServePlanItem
  run: RuleRun
  /** Its records in the blocks done (the next block's results are offset by this). */
  offset: number
  /** Its next position in `item.tests`. */
  next: number
  started: boolean
  done: boolean
}

/** A run that ended neither by its own stop nor its setup before its last record: a neighbour's stop cut it short. */
export function cutShort(run: RuleRun, item: ServePlanItem): boolean {
  return run.setup === undefined && !run.end && run.reached < item.n
}

/** A block's run of a rule added to its batch's: indexes shifted, its budget and stops counted. */
export function merge(p: Progress, item: ServePlanItem, r: RuleRun): void {
  const run = p.run
  p.started = true
  for (const [i, o] of r.results) run.results.set(p.offset + i, o)
  for (const [i, m] of r.stopped) run.stopped.set(p.offset + i, m)
  run.reached = p.offset + r.reached
  run.ms += r.ms
  if (r.setup !== undefined) run.setup ??= r.setup
  if (r.end) {
    // The budget named is the batch's, not what was left of it for the block.
    const message = r.end.message.replace(
      /^used up its budget of \d+ ms/,
      `used up its budget of ${p.item.budgetMs} ms`,
    )
    run.end = { why: r.end.why, message }
  }
  if (r.setup !== undefined || r.end) p.done = true
  else if (r.reached >= item.n) p.offset += item.n
  else p.done = true // cut short by the process's end: run again (warm-detect.ts)
}
