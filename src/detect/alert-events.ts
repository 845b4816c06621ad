// Where an alert's events are, for `GET /alerts/{id}/events`, without re-reading the match
// partitions on every call: each match file of the alert's event hours is read once, from where the
// last read stopped to its committed length, into an index alert id → stored-record locations. The
// files only grow (appends, committed in order), so an index is never stale, only behind; it is
// caught up on the next call. Memory is bounded: past `maxEntries` locations, the least recently
// used files' indexes are dropped (and read again when asked). Pages read the stored lines with
// stored-log.ts's readStoredLines (docs/decisions.md, "Alert events"). The file store owns one
// (DetectionStore.alertEvents).
import { open } from 'node:fs/promises'
import path from 'node:path'
import type { Group } from './grouping.js'
import type { Location } from './stored-log.js'

/** The match files of the file store (detection-store.ts): which cover a span, how much is committed. */
export interface CommittedMatchFiles {
  /** The folder the match files are relative to (`<data dir>/detections`). */
  readonly root: string
  matchFiles(fromMs: number, toMs: number): Promise<string[]>
  committedLength(rel: string): number
}

interface AlertLocations {
  partitions: string[]
  offsets: number[]
}

interface FileIndex {
  /** Bytes of the match file read so far (always a line boundary: the committed length). */
  readUpTo: number
  byAlert: Map<string, AlertLocations>
  entries: number
  /** The read in progress: concurrent calls wait for it instead of reading the same lines twice. */
  reading: Promise<void> | null
}

const READ = 1 << 20

export class AlertEventIndex {
  /** Match file → its index; the Map's order is the use order (least recent first). */
  private readonly files = new Map<string, FileIndex>()
  private entries = 0
  /** The sorted locations of the last 64 alerts asked (reused while their count is unchanged). */
  private readonly sorted = new Map<string, Location[]>()
  private readonly partitionNames = new Map<string, string>()

  constructor(
    private readonly store: CommittedMatchFiles,
    private readonly maxEntries = 2_000_000,
  ) {}

  /** Index entries held now (tests, metrics). */
  get size(): number {
    return this.entries
  }

  /** The locations of an alert's committed matches, sorted by data file then offset. */
  async locations(g: Group): Promise<Location[]> {
    const rels = await this.store.matchFiles(Date.parse(g.firstEventTime), Date.parse(g.lastEventTime))
    const parts: AlertLocations[] = []
    let count = 0
    for (const rel of rels) {
      const f = await this.caughtUp(rel)
      const mine = f.byAlert.get(g.id)
      if (mine) {
        parts.push(mine)
        count += mine.offsets.length
      }
    }
    this.evict(new Set(rels))
    const cached = this.sorted.get(g.id)
    if (cached && cached.length === count) return cached // lists only grow: same length, same list
    const out: Location[] = []
    for (const p of parts)
      for (let i = 0; i < p.offsets.length; i++) out.push({ partition: p.partitions[i]!, offset: p.offsets[i]! })
    out.sort((a, b) => (a.partition !== b.partition ? (a.partition < b.partition ? -1 : 1) : a.offset - b.offset))
    this.sorted.delete(g.id)
    this.sorted.set(g.id, out)
    if (this.sorted.size > 64) this.sorted.delete(this.sorted.keys().next().value!)
    return out
  }

  /** The index of one match file, read up to its committed length; marked as just used. */
  private async caughtUp(rel: string): Promise<FileIndex> {
    let f = this.files.get(rel)
    if (f) this.files.delete(rel)
    else f = { readUpTo: 0, byAlert: new Map(), entries: 0, reading: null }
    this.files.set(rel, f)
    while (f.reading) await f.reading
    const committed = this.store.committedLength(rel)
    if (committed <= f.readUpTo) return f
    f.reading = this.readMore(f, rel, committed)
    try {
      await f.reading
    } finally {
      f.reading = null
    }
    return f
  }

  private async readMore(f: FileIndex, rel: string, committed: number): Promise<void> {
    const fh = await open(path.join(this.store.root, rel), 'r')
    try {
      // Chunks from the last complete line read to the committed length (which ends a line),
      // decoded up to their last newline, never mid-character; a chunk grows for a longer line.
      let size = READ
      while (f.readUpTo < committed) {
        const want = Math.min(size, committed - f.readUpTo)
        const buf = Buffer.allocUnsafe(want)
        let got = 0
        while (got < want) {
          const { bytesRead } = await fh.read(buf, got, want - got, f.readUpTo + got)
          if (bytesRead === 0) break
          got += bytesRead
        }
        const end = buf.subarray(0, got).lastIndexOf(10) + 1
        if (end === 0) {
          if (got < want) break // the file is shorter than committed (logged at start)
          size *= 2
          continue
        }
        this.addLines(f, buf.toString('utf8', 0, end))
        f.readUpTo += end
      }
    } finally {
      await fh.close()
    }
  }

  private addLines(f: FileIndex, text: string): void {
    let start = 0
    while (start < text.length) {
      const nl = text.indexOf('\n', start)
      if (nl > start) {
        const m = JSON.parse(text.slice(start, nl)) as {
          alertId?: unknown
          record?: { partition?: unknown; offset?: unknown }
        }
        const r = m.record
        if (typeof m.alertId === 'string' && typeof r?.partition === 'string' && typeof r.offset === 'number') {
          let list = f.byAlert.get(m.alertId)
          if (!list) {
            list = { partitions: [], offsets: [] }
            f.byAlert.set(m.alertId, list)
          }
          let name = this.partitionNames.get(r.partition)
          if (name === undefined) {
            name = r.partition
            if (this.partitionNames.size < 100_000) this.partitionNames.set(name, name)
          }
          list.partitions.push(name)
          list.offsets.push(r.offset)
          f.entries++
          this.entries++
        }
      }
      start = nl + 1
    }
  }

  /** Drops the least recently used file indexes (not those of the current call) past the bound. */
  private evict(keep: Set<string>): void {
    for (const [rel, f] of this.files) {
      if (this.entries <= this.maxEntries) return
      if (keep.has(rel) || f.reading) continue
      this.files.delete(rel)
      this.entries -= f.entries
    }
  }
}
