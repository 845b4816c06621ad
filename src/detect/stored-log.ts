// Reading the stored audit log in acceptance order. Each data file is appended in acceptance order
// (the writer's queue order), so a k-way merge of the files by (p_parse_time, p_row_id) gives one
// global order: the "stored order" that live detection, a restart and a replay all follow.
import { open, readdir } from 'node:fs/promises'
import path from 'node:path'

export interface StoredRecord {
  /** Data file, relative to `<data dir>/logs`. */
  file: string
  /** Byte offset of the line in the file; `next` is the offset just past it. */
  offset: number
  next: number
  record: Record<string, unknown>
  /** The order key: p_parse_time, then p_row_id (per start: a fixed prefix and a padded counter). */
  key: string
}

const CHUNK = 1 << 20

/** Read size per cursor when many files are merged at once: memory stays near 64 MiB. */
export function chunkFor(cursors: number): number {
  return Math.max(16 << 10, Math.min(CHUNK, Math.floor((64 << 20) / Math.max(1, cursors))))
}

async function listDir(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort()
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
}

/** Data files of a log type (relative to the logs root), optionally only the partitions `keep` allows. */
export async function listDataFiles(
  logsRoot: string,
  logType: string,
  keep: (dt: string, hour: string) => boolean = () => true,
): Promise<string[]> {
  const out: string[] = []
  const base = path.join(logsRoot, logType)
  for (const dt of await listDir(base)) {
    if (!dt.startsWith('dt=')) continue
    for (const hour of await listDir(path.join(base, dt))) {
      if (!hour.startsWith('hour=') || !keep(dt.slice(3), hour.slice(5))) continue
      for (const f of await listDir(path.join(base, dt, hour)))
        if (f.endsWith('.ndjson') && !f.startsWith('.')) out.push(path.join(logType, dt, hour, f))
    }
  }
  return out
}

export function orderKey(record: Record<string, unknown>): string {
  return `${String(record.p_parse_time ?? '')}\u0000${String(record.p_row_id ?? '')}`
}

/** Complete lines of one file between two offsets, read in 1 MiB chunks. */
export class LineCursor {
  private pos: number
  private carry: Buffer = Buffer.alloc(0)
  private queue: StoredRecord[] = []
  private qi = 0
  /** Lines that were not JSON objects (never written by the log source; counted, skipped). */
  skipped = 0

  constructor(
    private readonly root: string,
    readonly file: string,
    start: number,
    private readonly end: number,
    private readonly chunk = CHUNK,
  ) {
    this.pos = start
  }

  /** The next record, or null at the end of the range (a last line without newline is not read). */
  async peek(): Promise<StoredRecord | null> {
    while (this.qi >= this.queue.length) {
      if (this.pos >= this.end) return null
      await this.fill()
    }
    return this.queue[this.qi] ?? null
  }

  take(): void {
    this.qi++
  }

  private async fill(): Promise<void> {
    const fh = await open(path.join(this.root, this.file), 'r')
    try {
      const want = Math.min(this.chunk, this.end - this.pos)
      const buf = Buffer.allocUnsafe(want)
      let got = 0
      while (got < want) {
        const { bytesRead } = await fh.read(buf, got, want - got, this.pos + got)
        if (bytesRead === 0) break
        got += bytesRead
      }
      const base = this.pos - this.carry.length
      const data = this.carry.length ? Buffer.concat([this.carry, buf.subarray(0, got)]) : buf.subarray(0, got)
      this.pos += got
      if (got === 0) this.pos = this.end // the file is shorter than announced: stop, never spin
      this.queue = []
      this.qi = 0
      let start = 0
      for (;;) {
        const nl = data.indexOf(10, start)
        if (nl < 0) break
        if (nl > start) {
          try {
            const record = JSON.parse(data.toString('utf8', start, nl)) as Record<string, unknown>
            if (record !== null && typeof record === 'object' && !Array.isArray(record))
              this.queue.push({
                file: this.file,
                offset: base + start,
                next: base + nl + 1,
                record,
                key: orderKey(record),
              })
            else this.skipped++
          } catch {
            this.skipped++
          }
        }
        start = nl + 1
      }
      this.carry = Buffer.from(data.subarray(start))
    } finally {
      await fh.close()
    }
  }
}

/** Merges cursors by order key (ties by file name, then offset), yielding records one by one. */
export async function* mergeCursors(cursors: LineCursor[]): AsyncGenerator<StoredRecord> {
  const heads: Array<{ c: LineCursor; r: StoredRecord }> = []
  for (const c of cursors) {
    const r = await c.peek()
    if (r) heads.push({ c, r })
  }
  const less = (a: StoredRecord, b: StoredRecord) =>
    a.key !== b.key ? a.key < b.key : a.file !== b.file ? a.file < b.file : a.offset < b.offset
  while (heads.length > 0) {
    let best = 0
    for (let i = 1; i < heads.length; i++) if (less(heads[i]!.r, heads[best]!.r)) best = i
    const h = heads[best]!
    yield h.r
    h.c.take()
    const r = await h.c.peek()
    if (r) h.r = r
    else heads.splice(best, 1)
  }
}

/** The stored line at `offset` of a data file (a match's `record`), parsed; null when there is none. */
export async function readStoredLine(logsRoot: string, partition: string, offset: number): Promise<unknown> {
  // The partition comes from our own match lines; still, never read outside the logs folder.
  const abs = path.resolve(logsRoot, partition)
  if (!abs.startsWith(`${logsRoot}${path.sep}`)) return null
  const fh = await open(abs, 'r')
  try {
    let size = 4096
    for (;;) {
      const buf = Buffer.alloc(size)
      const { bytesRead } = await fh.read(buf, 0, size, offset)
      const nl = buf.subarray(0, bytesRead).indexOf(10)
      if (nl >= 0) return JSON.parse(buf.toString('utf8', 0, nl))
      if (bytesRead < size) return null
      size *= 4
    }
  } finally {
    await fh.close()
  }
}
