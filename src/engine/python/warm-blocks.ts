// A warm worker's batch in blocks (warm-worker.ts, python/rulekeeper_serve.py): the worker runs every
// rule over a block of BLOCK_RECORDS records before the next block (rule by rule over 5,000 records,
// the event objects fell out of the CPU's cache between rules). The whole batch is written at once:
// a header line, then per block one line of records per set, decoded by the worker when it gets
// there. What one rule did in a batch, the blocks' layout both ends derive the order of the rules'
// runs from, and the JSON text of a block, made once for every worker it is sent to.
import type { RecordOutcome } from '../engine.js'
import type { StoredLines } from '../live.js'
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

// The same for stored lines: a JSON array of them, `,` and a tab between lines (JSON whitespace,
// and no stored line that goes as it is holds a raw tab): the worker parses the array at once, or,
// when a damaged line makes it unreadable, splits it at the tabs and parses line by line.
const lineBlockTexts = new WeakMap<StoredLines, Map<number, string>>()

/** Between two stored lines of a block (the worker's fallback splits there: rulekeeper_serve.py). */
export const LINE_SEPARATOR = ',\t'

export function linesBlockJson(records: StoredLines, from: number, to: number): string {
  let texts = lineBlockTexts.get(records)
  if (!texts) lineBlockTexts.set(records, (texts = new Map()))
  let text = texts.get(from)
  if (text === undefined) texts.set(from, (text = `[${records.lines.slice(from, to).join(LINE_SEPARATOR)}]`))
  return text
}

/** A rule's progress over the blocks of a batch (the worker keeps the same: rulekeeper_serve.py `Progress`). */
export interface Progress {
  item: ServePlanItem
  run: RuleRun
  started: boolean
  done: boolean
}

/** A run that ended neither by its own stop nor its setup before its last record: a neighbour's stop cut it short. */
export function cutShort(run: RuleRun, item: ServePlanItem): boolean {
  return run.setup === undefined && !run.end && run.reached < item.n
}

/**
 * The batch's blocks: each set's records in block lines (one line holding them all when a set is
 * given as text: then the batch is one block). A rule's records in block `b` are the indexes from
 * where it got to up to the first whose record lies past the block, as the worker counts them.
 */
export class BatchBlocks {
  /** Set key → its block lines, in the order they are written. */
  readonly lines: Array<[string, string[]]> = []
  /** Records per block, or null: one block. */
  readonly size: number | null
  private readonly lengths = new Map<string, number>()
  /** Sets given as stored lines (the worker skips a line that is not a JSON object). */
  private readonly stored: string[] = []

  constructor(events: Map<string, string | readonly object[] | StoredLines>) {
    let text = false
    for (const records of events.values()) if (typeof records === 'string') text = true
    this.size = text ? null : BLOCK_RECORDS
    for (const [key, records] of events) {
      if (typeof records === 'string') {
        this.lines.push([key, [records]])
        continue
      }
      this.lengths.set(key, records.length)
      const step = this.size ?? Math.max(1, records.length)
      const texts: string[] = []
      const lines = 'lines' in records ? records : undefined
      if (lines) this.stored.push(key)
      for (let from = 0; from < records.length; from += step) {
        const to = Math.min(records.length, from + step)
        texts.push(lines ? linesBlockJson(lines, from, to) : blockJson(records as readonly object[], from, to))
      }
      this.lines.push([key, texts])
    }
  }

  /** How many blocks the worker goes through. */
  get count(): number {
    return Math.max(0, ...this.lines.map(([, texts]) => texts.length))
  }

  /** The header line's part about the records: each set's number of block lines, the block size. */
  header(): { sets: Array<[string, number]>; block: number | null; stored?: string[] } {
    return {
      sets: this.lines.map(([key, texts]) => [key, texts.length]),
      block: this.size,
      ...(this.stored.length > 0 ? { stored: this.stored } : {}),
    }
  }

  /** The index past a rule's last record in block `b`, from `first` (its progress so far). */
  end(item: ServePlanItem, first: number, b: number): number {
    if (this.size === null) return b === 0 ? item.n : first
    const length = this.lengths.get(item.e) ?? 0
    const blockEnd = Math.min(length, (b + 1) * this.size)
    if (!item.tests) return Math.min(item.n, blockEnd)
    let last = first
    while (last < item.n && item.tests[last]! < blockEnd) last++
    return last
  }

  /** Block lines summed over the rules: how many runs (a start and an end frame each) a batch may have at most. */
  runs(plan: readonly ServePlanItem[]): number {
    return plan.length * Math.max(1, this.count)
  }
}
