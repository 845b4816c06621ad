// Reading the stored audit log in acceptance order. Each data file is appended in acceptance order
// (the writer's queue order), so a k-way merge of the files by (p_parse_time, p_row_id) gives one
// global order: the "stored order" that live detection, a restart and a replay all follow
// (the merge itself: stored-merge.ts).
// Speed (docs/decisions.md, "Reading the stored log fast"): a cursor reads its file in large
// chunks and parses a line only when it becomes the cursor's head, so few parsed records are alive
// at once; the merge is synchronous and only awaits when a cursor has to read its next chunk.
import { isAscii } from 'node:buffer'
import { type FileHandle, open, stat } from 'node:fs/promises'
import path from 'node:path'
import { listSorted } from '../dir-list.js'
import { STORED_TAIL_FIELDS } from '../ingest/log-type.js'

/** What a damaged line (standard fields readable, the whole not a JSON object) reads as: never evaluated. */
const UNREADABLE: Record<string, unknown> = Object.freeze({})

/** One stored line: where it is, its standard fields, and the record (parsed when first asked for). */
export class StoredRecord {
  /** undefined: not parsed yet; null: the line is not a JSON object. */
  private parsed: Record<string, unknown> | null | undefined

  constructor(
    /** Data file, relative to `<data dir>/logs`. */
    readonly file: string,
    /** Byte offset of the line in the file; `next` is the offset just past it. */
    readonly offset: number,
    readonly next: number,
    /** The line as stored (without its newline): what the detector hands to its rule worker. */
    readonly line: string,
    /** The order: p_parse_time, then p_row_id (per start: a fixed prefix and a padded counter). */
    readonly parseTime: string,
    readonly rowId: string,
    /** p_log_type and p_event_time as strings ('' when absent). */
    readonly logType: string,
    readonly eventTime: string,
    parsed?: Record<string, unknown>,
  ) {
    this.parsed = parsed
  }

  /** The record, parsed on first use (most records meet no rule: detection never parses them). */
  get record(): Record<string, unknown> {
    if (this.parsed === undefined) this.parsed = parseObject(this.line)
    return this.parsed ?? UNREADABLE
  }

  /** False for a damaged line whose standard fields read but whose whole is not a JSON object. */
  get readable(): boolean {
    return this.record !== UNREADABLE
  }

  /** The order key as one string (p_parse_time NUL p_row_id): the checkpoint's `lastKey`. */
  get key(): string {
    return `${this.parseTime}\u0000${this.rowId}`
  }
}

/** A stored line as a JSON object, or null when it is not one (damaged or not a record). */
export function parseObject(line: string): Record<string, unknown> | null {
  let record: unknown
  try {
    record = JSON.parse(line)
  } catch {
    return null
  }
  return record !== null && typeof record === 'object' && !Array.isArray(record)
    ? (record as Record<string, unknown>)
    : null
}

// The log source writes each record as JSON.stringify of the record with the standard fields
// appended last, STORED_TAIL_FIELDS first and in that order (every log type of the registry,
// ingest/log-type.ts), and refuses top-level p_* fields in what it is sent. So the last
// `,"p_log_type":"` of a stored line starts its standard fields: inside a JSON string every `"` is
// escaped, so that text is always a key, and the top-level one comes after any nested one. Reading
// those four fields from the tail spares the parse of the whole record; a line that does not fit
// this shape (other writers, older data) is parsed whole.
const TAIL_START = `,"${STORED_TAIL_FIELDS[0]}":"`

/** [logType, eventTime, parseTime, rowId] read from the tail of a line the log source wrote, or null. */
export function readStandardTail(line: string): [string, string, string, string] | null {
  if (line.charCodeAt(0) !== 0x7b || line.charCodeAt(line.length - 1) !== 0x7d) return null
  let at = line.lastIndexOf(TAIL_START)
  if (at < 0) return null
  at++ // at the key's opening quote
  const out: string[] = []
  for (const key of STORED_TAIL_FIELDS) {
    if (out.length > 0) {
      if (line.charCodeAt(at) !== 0x2c) return null // ,
      at++
    }
    const prefix = `"${key}":"`
    if (!line.startsWith(prefix, at)) return null
    const from = at + prefix.length
    const end = line.indexOf('"', from)
    if (end < 0) return null
    const value = line.slice(from, end)
    if (value.includes('\\')) return null // an escape: leave it to JSON.parse
    out.push(value)
    at = end + 1
  }
  const c = line.charCodeAt(at)
  if (c !== 0x2c && c !== 0x7d) return null
  return out as [string, string, string, string]
}

const CHUNK = 1 << 20

/** Read size per cursor when many files are merged at once: memory stays near 64 MiB. */
export function chunkFor(cursors: number): number {
  return Math.max(16 << 10, Math.min(CHUNK, Math.floor((64 << 20) / Math.max(1, cursors))))
}

/**
 * Which partitions to read: asked for a day (`hour` undefined: may any hour of it be wanted?)
 * before its hours are listed, then for each hour.
 */
export type PartitionFilter = (dt: string, hour?: string) => boolean

const HOUR_MS = 3_600_000

/**
 * The partitions whose hour meets [fromMs, toMs) (whose day may, for a day); a name that is not a
 * date or an hour is kept, so no stored data is ever skipped silently.
 */
export function partitionsMeeting(fromMs: number, toMs: number): PartitionFilter {
  return (dt, hour) => {
    const start = Date.parse(`${dt}T${hour ?? '00'}:00:00Z`)
    const span = hour === undefined ? 24 * HOUR_MS : HOUR_MS
    return Number.isNaN(start) || (start < toMs && start + span > fromMs)
  }
}

/** Data files of a log type (relative to the logs root), optionally only the partitions `keep` allows. */
export async function listDataFiles(
  logsRoot: string,
  logType: string,
  keep: PartitionFilter = () => true,
): Promise<string[]> {
  const out: string[] = []
  const base = path.join(logsRoot, logType)
  for (const dt of await listSorted(base)) {
    if (!dt.startsWith('dt=') || !keep(dt.slice(3))) continue
    for (const hour of await listSorted(path.join(base, dt))) {
      if (!hour.startsWith('hour=') || !keep(dt.slice(3), hour.slice(5))) continue
      for (const f of await listSorted(path.join(base, dt, hour)))
        if (f.endsWith('.ndjson') && !f.startsWith('.')) out.push(path.join(logType, dt, hour, f))
    }
  }
  return out
}

/** The data files of a log type's folder (relative to the logs root) with their sizes now. */
export async function sizedDataFiles(
  logsRoot: string,
  logType: string,
): Promise<Array<{ file: string; size: number }>> {
  const out: Array<{ file: string; size: number }> = []
  for (const file of await listDataFiles(logsRoot, logType))
    out.push({ file, size: (await stat(path.join(logsRoot, file))).size })
  return out
}

const orderField = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v))

const EMPTY = Buffer.alloc(0)

/** Complete lines of one file between two offsets, read in chunks (1 MiB by default). */
export class LineCursor {
  /** File offset of the next read. */
  private pos: number
  /** The current chunk: bytes from file offset `base`; lines are parsed from `at` up to `limit`. */
  private data: Buffer = EMPTY
  /** The chunk as text when it is all ASCII (character index = byte index), else null. */
  private text: string | null = null
  private base: number
  private at = 0
  private limit = 0
  private head: StoredRecord | null = null
  /** Open from the first read until the range is read (or `close`): one open per file, not per chunk. */
  private fh: FileHandle | null = null
  /** Lines that were not JSON objects (never written by the log source; counted, skipped). */
  skipped = 0

  constructor(
    private readonly root: string,
    readonly file: string,
    start: number,
    private readonly end: number,
    private readonly chunk = CHUNK,
    /**
     * 'lazy' (live detection): a line the log source wrote is parsed only when its record is asked
     * for. 'eager' (replay, which evaluates every record it reads): parsed at once, as reading the
     * standard fields first would only add work, and strings taken from the parsed record compare
     * faster in the merge than slices of the chunk.
     */
    private readonly parse: 'lazy' | 'eager' = 'lazy',
  ) {
    this.pos = start
    this.base = start
  }

  /**
   * The next record without reading: the record, null at the end of the range (a last line
   * without newline is not read), or undefined when the next chunk must be read first (`fill`).
   */
  peekSync(): StoredRecord | null | undefined {
    if (this.head !== null) return this.head
    while (this.at < this.limit) {
      const start = this.at
      const nl = this.text !== null ? this.text.indexOf('\n', start) : this.data.indexOf(10, start)
      this.at = nl + 1
      if (nl === start) continue
      const line = this.text !== null ? this.text.slice(start, nl) : this.data.toString('utf8', start, nl)
      const tail = this.parse === 'lazy' ? readStandardTail(line) : null
      if (tail !== null) {
        this.head = new StoredRecord(
          this.file,
          this.base + start,
          this.base + nl + 1,
          line,
          tail[2],
          tail[3],
          tail[0],
          tail[1],
        )
        return this.head
      }
      const r = parseObject(line)
      if (r === null) {
        this.skipped++
        continue
      }
      this.head = new StoredRecord(
        this.file,
        this.base + start,
        this.base + nl + 1,
        line,
        orderField(r.p_parse_time),
        orderField(r.p_row_id),
        orderField(r.p_log_type),
        orderField(r.p_event_time),
        r,
      )
      return this.head
    }
    return this.pos >= this.end ? null : undefined
  }

  /** The next record (reading as needed), or null at the end of the range. */
  async peek(): Promise<StoredRecord | null> {
    for (;;) {
      const r = this.peekSync()
      if (r !== undefined) return r
      await this.fill()
    }
  }

  take(): void {
    this.head = null
  }

  /** Closes the file (when a reader stops before the end of the range); reading again reopens it. */
  async close(): Promise<void> {
    const fh = this.fh
    this.fh = null
    await fh?.close()
  }

  /** Reads the next chunk; what is left of the current one (a partial line) is kept before it. */
  async fill(): Promise<void> {
    const carry = this.data.subarray(this.limit)
    const want = Math.min(this.chunk, this.end - this.pos)
    const buf = Buffer.allocUnsafe(carry.length + want)
    carry.copy(buf, 0)
    let got = 0
    this.fh ??= await open(path.join(this.root, this.file), 'r')
    try {
      while (got < want) {
        const { bytesRead } = await this.fh.read(buf, carry.length + got, want - got, this.pos + got)
        if (bytesRead === 0) break
        got += bytesRead
      }
    } catch (err) {
      await this.close()
      throw err
    }
    this.base += this.limit
    this.pos += got
    if (got < want) this.pos = this.end // the file is shorter than announced: stop, never spin
    if (this.pos >= this.end) await this.close()
    const data = buf.subarray(0, carry.length + got)
    this.data = data
    this.at = 0
    this.limit = data.lastIndexOf(10) + 1
    this.text = this.limit > 0 && isAscii(data.subarray(0, this.limit)) ? data.toString('latin1', 0, this.limit) : null
  }
}

/** One stored record: its data file (relative to `logs/`) and the byte offset of its line. */
export interface Location {
  partition: string
  offset: number
}

/** The stored lines at sorted locations, parsed: one open per data file, reads of 64 KiB or more. */
export async function readStoredLines(logsRoot: string, locations: readonly Location[]): Promise<unknown[]> {
  const out: unknown[] = []
  let i = 0
  while (i < locations.length) {
    const partition = locations[i]!.partition
    let j = i
    while (j < locations.length && locations[j]!.partition === partition) j++
    // The partition comes from our own match lines; still, never read outside the logs folder.
    const abs = path.resolve(logsRoot, partition)
    if (!abs.startsWith(`${logsRoot}${path.sep}`)) {
      for (; i < j; i++) out.push(null)
      continue
    }
    const fh = await open(abs, 'r')
    try {
      let buf = Buffer.alloc(0)
      let bufStart = 0
      for (; i < j; i++) {
        const offset = locations[i]!.offset
        let line: unknown = null
        for (let size = 64 << 10; ; size *= 4) {
          const at = offset - bufStart
          const nl = at >= 0 && at < buf.length ? buf.indexOf(10, at) : -1
          if (nl >= 0) {
            line = JSON.parse(buf.toString('utf8', at, nl))
            break
          }
          const fresh = Buffer.allocUnsafe(size)
          const { bytesRead } = await fh.read(fresh, 0, size, offset)
          buf = fresh.subarray(0, bytesRead)
          bufStart = offset
          if (buf.indexOf(10) < 0 && bytesRead < size) break // no complete line there
        }
        out.push(line)
      }
    } finally {
      await fh.close()
    }
  }
  return out
}
