// Appends lines to rolling NDJSON files, one current file per partition directory, and makes them
// durable with group commit: requests queue their lines, one loop writes everything queued into each
// file with a single write, fdatasyncs the touched files together, and only then resolves every
// waiter. Files are only ever appended to, and a file is never reopened after it is closed (a new
// one is started instead), so a torn tail after a crash sits in a file nobody writes to any more.
import { randomBytes } from 'node:crypto'
import { mkdir, open, type FileHandle } from 'node:fs/promises'
import path from 'node:path'
import { fsyncDir } from '../durable-file.js'
import { RulekeeperError } from '../errors.js'

interface OpenFile {
  fh: FileHandle
  /** Path relative to the root (what `onDurable` reports). */
  rel: string
  size: number
  lastUsed: number
  /** fdatasyncs issued and not yet finished; the file is closed only after them. */
  syncs: Set<Promise<void>>
}

interface Batch {
  byDir: Map<string, string[]>
  waiters: Array<{ resolve: () => void; reject: (e: unknown) => void }>
}

export interface GroupCommitWriterOptions {
  root: string
  /** Every file this writer creates starts with it (the source id), so recovery finds its own files. */
  filePrefix: string
  rollBytes: number
  /** Files left open at most; the least recently used is closed (and never reopened) beyond it. */
  maxOpenFiles?: number
  /** Group commits whose fdatasync may be in flight at once (each holds a libuv pool thread). */
  maxInflightSyncs?: number
  /** A file not written to for this long is closed (a later line in its partition starts a new file). */
  idleCloseMs?: number
  /** seconds: queue to durable for the batch; fsyncSeconds: the fdatasyncs alone. */
  onCommit?: (info: { seconds: number; fsyncSeconds: number; lines: number; bytes: number; files: number }) => void
  /**
   * Called in queue order once a batch is durable, with each touched file (relative to the root) and
   * its durable length: what a follower of the store (detection) may read up to.
   */
  onDurable?: (files: ReadonlyArray<{ file: string; size: number }>) => void
}

/** Opens with a start stamp so file names sort by time across restarts. */
function newBootId(): string {
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')
  return `${stamp}-${randomBytes(3).toString('hex')}`
}

export class GroupCommitWriter {
  private readonly opts: Required<Omit<GroupCommitWriterOptions, 'onCommit' | 'onDurable'>> &
    Pick<GroupCommitWriterOptions, 'onCommit' | 'onDurable'>
  private readonly bootId = newBootId()
  private seq = 0
  private readonly files = new Map<string, OpenFile>()
  private readonly durableDirs = new Set<string>()
  private queued: Batch = { byDir: new Map(), waiters: [] }
  private running: Promise<void> | undefined
  private wake: (() => void) | undefined
  private readonly closing = new Set<Promise<void>>()
  private failure: unknown
  private closed = false

  private readonly idleTimer: NodeJS.Timeout

  constructor(opts: GroupCommitWriterOptions) {
    this.opts = { maxOpenFiles: 64, maxInflightSyncs: 2, idleCloseMs: 10 * 60_000, ...opts }
    // Idle files are closed so that deleting an old partition (retention) never leaves a handle
    // writing into a removed folder. Only between batches: a file is never closed under a write.
    this.idleTimer = setInterval(
      () => {
        if (this.running !== undefined) return
        const cutoff = performance.now() - this.opts.idleCloseMs
        for (const [dir, f] of this.files) if (f.lastUsed < cutoff) this.retire(dir, f)
      },
      Math.min(60_000, this.opts.idleCloseMs),
    )
    this.idleTimer.unref()
  }

  /**
   * Queues lines grouped by partition directory (relative to the root, e.g.
   * `Editor.Audit/dt=2026-11-20/hour=08`; each line one JSON document without newline). Resolves once
   * every line is written and fdatasync'ed, with the directory entries of any new file.
   */
  append(byDir: Map<string, string[]>): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.unavailable())
    if (this.closed) return Promise.reject(new RulekeeperError('Unavailable', 'the log store is shutting down'))
    if (byDir.size === 0) return Promise.resolve()
    return new Promise((resolve, reject) => {
      for (const [dir, lines] of byDir) {
        const list = this.queued.byDir.get(dir)
        if (!list) this.queued.byDir.set(dir, lines)
        else for (const l of lines) list.push(l)
      }
      this.queued.waiters.push({ resolve, reject })
      this.running ??= this.drain()
      this.wake?.()
    })
  }

  async close(): Promise<void> {
    this.closed = true
    clearInterval(this.idleTimer)
    await this.running
    for (const [dir, f] of this.files) this.retire(dir, f)
    await Promise.all([...this.closing])
  }

  private unavailable(): RulekeeperError {
    return new RulekeeperError(
      'Unavailable',
      'the log store failed to write; records are not being accepted until a restart',
    )
  }

  private async drain(): Promise<void> {
    // Writes stay strictly sequential (each file is appended in queue order); only the fdatasyncs
    // overlap, up to maxInflightSyncs, so a slow fsync on a busy disk does not hold back the next
    // batch's write. Batches are still acknowledged in order: batch n waits for batch n-1.
    const inflight = new Set<Promise<void>>()
    let previous: Promise<void> = Promise.resolve()
    try {
      for (;;) {
        if (this.queued.waiters.length === 0 || inflight.size >= this.opts.maxInflightSyncs) {
          if (inflight.size === 0) break
          const woken = new Promise<void>((r) => (this.wake = r))
          await Promise.race([...inflight, woken])
          this.wake = undefined
          continue
        }
        const batch = this.queued
        this.queued = { byDir: new Map(), waiters: [] }
        const started = performance.now()
        const written = this.failure === undefined ? this.writeBatch(batch) : Promise.reject(this.failure)
        const synced = written.then(async (w) => {
          const fsyncSeconds = await w.synced
          this.opts.onCommit?.({
            seconds: (performance.now() - started) / 1000,
            fsyncSeconds,
            lines: w.lines,
            bytes: w.bytes,
            files: w.files,
          })
        })
        const prev = previous
        const settled = (async () => {
          let error: unknown
          try {
            await synced
          } catch (err) {
            error = err
          }
          await prev
          error ??= this.failure
          if (error === undefined) {
            const files = (await written).durable
            try {
              this.opts.onDurable?.(files)
            } catch {
              // a follower's failure is its own; the batch is durable and acknowledged regardless
            }
            for (const w of batch.waiters) w.resolve()
            return
          }
          // After a failed write or fsync the page cache cannot be trusted (fsyncgate): stop for good.
          this.failure ??= error
          for (const w of batch.waiters) w.reject(error instanceof RulekeeperError ? error : this.unavailable())
        })()
        previous = settled
        inflight.add(settled)
        void settled.then(() => inflight.delete(settled))
        // A failed write stops the next batch at once, not only when this one is settled in order.
        await written.catch((err: unknown) => void (this.failure ??= err))
      }
    } finally {
      this.running = undefined
    }
  }

  /**
   * Appends the batch (one write per file) and issues the fdatasyncs, returning without waiting for
   * them. Files past the roll size are retired only after their fsync is issued.
   */
  private async writeBatch(batch: Batch): Promise<{
    synced: Promise<number>
    lines: number
    bytes: number
    files: number
    durable: Array<{ file: string; size: number }>
  }> {
    const touched: OpenFile[] = []
    const durable: Array<{ file: string; size: number }> = []
    let lines = 0
    let bytes = 0
    await Promise.all(
      [...batch.byDir].map(async ([dir, list]) => {
        const file = await this.currentFile(dir)
        const buf = Buffer.from(`${list.join('\n')}\n`, 'utf8')
        const count = list.length
        // The batch stays referenced until it is durable (its waiters); its lines need not.
        list.length = 0
        await writeAll(file.fh, buf)
        file.size += buf.length
        durable.push({ file: file.rel, size: file.size })
        file.lastUsed = performance.now()
        touched.push(file)
        lines += count
        bytes += buf.length
      }),
    )
    const syncStarted = performance.now()
    const synced = Promise.all(
      touched.map((f) => {
        const p = f.fh.datasync()
        f.syncs.add(p)
        return p.finally(() => f.syncs.delete(p))
      }),
    ).then(() => (performance.now() - syncStarted) / 1000)
    for (const [dir, f] of this.files) if (f.size >= this.opts.rollBytes) this.retire(dir, f)
    if (this.files.size > this.opts.maxOpenFiles) {
      const byAge = [...this.files].sort((a, b) => a[1].lastUsed - b[1].lastUsed)
      for (const [dir, f] of byAge.slice(0, this.files.size - this.opts.maxOpenFiles)) this.retire(dir, f)
    }
    return { synced, lines, bytes, files: touched.length, durable }
  }

  /** Takes a file out of service; it is closed once the fsyncs already issued on it are done. */
  private retire(dir: string, f: OpenFile): void {
    this.files.delete(dir)
    const closing = Promise.allSettled([...f.syncs])
      .then(() => f.fh.close())
      .catch(() => undefined)
    this.closing.add(closing)
    void closing.then(() => this.closing.delete(closing))
  }

  private async currentFile(dir: string): Promise<OpenFile> {
    const existing = this.files.get(dir)
    if (existing) return existing
    const absDir = path.join(this.opts.root, dir)
    await this.makeDurableDir(absDir)
    const name = `${this.opts.filePrefix}-${this.bootId}-${String(++this.seq).padStart(6, '0')}.ndjson`
    // 'wx': a name is never reused, so an existing file would mean two writers on one data dir.
    let fh: FileHandle
    try {
      fh = await open(path.join(absDir, name), 'wx', 0o644)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
      // The partition folder was deleted (retention) since it was made: make it again.
      this.durableDirs.delete(absDir)
      await this.makeDurableDir(absDir)
      fh = await open(path.join(absDir, name), 'wx', 0o644)
    }
    await fsyncDir(absDir)
    const file: OpenFile = { fh, rel: path.join(dir, name), size: 0, lastUsed: performance.now(), syncs: new Set() }
    this.files.set(dir, file)
    return file
  }

  /** mkdir -p, then fsync each new directory's parent so the new entries survive a power cut. */
  private async makeDurableDir(absDir: string): Promise<void> {
    if (this.durableDirs.has(absDir)) return
    const first = await mkdir(absDir, { recursive: true })
    if (first !== undefined) {
      const chain: string[] = []
      for (let d = absDir; ; d = path.dirname(d)) {
        chain.push(d)
        if (d === first || path.dirname(d) === d) break
      }
      for (const d of chain) await fsyncDir(path.dirname(d))
    }
    this.durableDirs.add(absDir)
  }
}

async function writeAll(fh: FileHandle, buf: Buffer): Promise<void> {
  let off = 0
  while (off < buf.length) {
    const { bytesWritten } = await fh.write(buf, off, buf.length - off)
    off += bytesWritten
  }
}
