// The k-way merge of a stored log's cursors (stored-log.ts) in stored order: by (p_parse_time,
// p_row_id), ties by data file then offset. Synchronous between reads of the log, so the detector,
// a restart and a replay take one promise per read chunk, not one per record.
import type { LineCursor, StoredRecord } from './stored-log.js'

/** Whether a comes before b in stored order (ties by file name, then offset). */
export function storedBefore(a: StoredRecord, b: StoredRecord): boolean {
  if (a.parseTime !== b.parseTime) return a.parseTime < b.parseTime
  if (a.rowId !== b.rowId) return a.rowId < b.rowId
  return a.file !== b.file ? a.file < b.file : a.offset < b.offset
}

/**
 * The k-way merge of cursors in stored order, synchronous between reads: `next()` gives records
 * until a cursor needs its next chunk, then `read()` reads it. The cursors with a record ready are
 * kept in a binary heap by their head record (O(log k) per record, however many files are merged).
 */
export class StoredLogMerge {
  /** Cursors whose head is parsed, as a min-heap of their heads. */
  private readonly heap: LineCursor[] = []
  private readonly heads: StoredRecord[] = []
  private waiting: LineCursor[]

  constructor(private readonly cursors: readonly LineCursor[]) {
    this.waiting = [...cursors]
  }

  /** Closes every cursor's file (a reader that stops early must call it). */
  async close(): Promise<void> {
    for (const c of this.cursors) await c.close()
  }

  /** Reads what the merge waits for; false once every cursor is at its end. */
  async read(): Promise<boolean> {
    const waiting = this.waiting
    this.waiting = []
    for (const c of waiting) {
      const r = await c.peek()
      if (r !== null) this.push(c, r)
    }
    return this.heap.length > 0
  }

  /** The next record in stored order, or null when a cursor must read first or all are done. */
  next(): StoredRecord | null {
    if (this.waiting.length > 0 || this.heap.length === 0) return null
    const c = this.heap[0]!
    const rec = this.heads[0]!
    c.take()
    const after = c.peekSync()
    if (after) {
      this.heads[0] = after
      this.down(0)
    } else {
      // at its end (null) or waiting for its next chunk (undefined): out of the heap
      const lastC = this.heap.pop()!
      const lastR = this.heads.pop()!
      if (this.heap.length > 0) {
        this.heap[0] = lastC
        this.heads[0] = lastR
        this.down(0)
      }
      if (after === undefined) this.waiting.push(c)
    }
    return rec
  }

  private push(c: LineCursor, r: StoredRecord): void {
    const heap = this.heap
    const heads = this.heads
    let i = heap.length
    heap.push(c)
    heads.push(r)
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!storedBefore(r, heads[parent]!)) break
      heap[i] = heap[parent]!
      heads[i] = heads[parent]!
      i = parent
    }
    heap[i] = c
    heads[i] = r
  }

  private down(i: number): void {
    const heap = this.heap
    const heads = this.heads
    const n = heap.length
    const c = heap[i]!
    const r = heads[i]!
    for (;;) {
      let child = 2 * i + 1
      if (child >= n) break
      if (child + 1 < n && storedBefore(heads[child + 1]!, heads[child]!)) child++
      if (!storedBefore(heads[child]!, r)) break
      heap[i] = heap[child]!
      heads[i] = heads[child]!
      i = child
    }
    heap[i] = c
    heads[i] = r
  }
}

/** Merges cursors in stored order, yielding up to `max` records at a time. */
export async function* mergeBatches(cursors: readonly LineCursor[], max = 1024): AsyncGenerator<StoredRecord[]> {
  const merge = new StoredLogMerge(cursors)
  try {
    while (await merge.read()) {
      let batch: StoredRecord[] = []
      for (let r = merge.next(); r !== null; r = merge.next()) {
        batch.push(r)
        if (batch.length >= max) {
          yield batch
          batch = []
        }
      }
      if (batch.length > 0) yield batch
    }
  } finally {
    await merge.close()
  }
}

/** Merges cursors by stored order, yielding records one by one. */
export async function* mergeCursors(cursors: readonly LineCursor[]): AsyncGenerator<StoredRecord> {
  for await (const batch of mergeBatches(cursors)) yield* batch
}
