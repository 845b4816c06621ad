// Appends lines to rolling NDJSON files, one current file per partition directory, and makes them
// durable with group commit: requests queue their lines, one loop writes everything queued into each
// file with a single write, fdatasyncs the touched files together, and only then resolves every
// waiter. Files are only ever appended to, and a file is never reopened after it is closed (a new
// one is started instead), so a torn tail after a crash sits in a file nobody writes to any more.
import { randomBytes } from 'node:crypto'
import { mkdir, open, type FileHandle } from 'node:fs/promises'
import path from 'node:path'
import { RulekeeperError } from '../errors.js'

export interface AppendEntry {
  /** Partition directory relative to the writer's root, e.g. `Editor.Audit/dt=2026-11-20/hour=08`. */
  dir: string
  /** One JSON document, no newline. */
  line: string
}

interface OpenFile {
  fh: FileHandle
  size: number
  lastUsed: number
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
  onCommit?: (info: { seconds: number; lines: number; bytes: number; files: number }) => void
}

/** Opens with a start stamp so file names sort by time across restarts. */
export function newBootId(): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')
  return `${stamp}-${randomBytes(3).toString('hex')}`
}

export class GroupCommitWriter {
  private readonly opts: Required<Omit<GroupCommitWriterOptions, 'onCommit'>> & Pick<GroupCommitWriterOptions, 'onCommit'>
  private readonly bootId = newBootId()
  private seq = 0
  private readonly files = new Map<string, OpenFile>()
  private readonly durableDirs = new Set<string>()
  private queued: Batch = { byDir: new Map(), waiters: [] }
  private running: Promise<void> | undefined
  private failure: unknown
  private closed = false

  constructor(opts: GroupCommitWriterOptions) {
    this.opts = { maxOpenFiles: 64, ...opts }
  }

  /** Resolves once every line is written and fdatasync'ed (with the directory entries of new files). */
  append(entries: AppendEntry[]): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.unavailable())
    if (this.closed) return Promise.reject(new RulekeeperError('Unavailable', 'the log store is shutting down'))
    if (entries.length === 0) return Promise.resolve()
    return new Promise((resolve, reject) => {
      for (const e of entries) {
        const list = this.queued.byDir.get(e.dir)
        if (list) list.push(e.line)
        else this.queued.byDir.set(e.dir, [e.line])
      }
      this.queued.waiters.push({ resolve, reject })
      this.running ??= this.drain()
    })
  }

  async close(): Promise<void> {
    this.closed = true
    await this.running
    for (const f of this.files.values()) await f.fh.close().catch(() => {})
    this.files.clear()
  }

  private unavailable(): RulekeeperError {
    return new RulekeeperError('Unavailable', 'the log store failed to write; records are not being accepted until a restart')
  }

  private async drain(): Promise<void> {
    try {
      while (this.queued.waiters.length > 0) {
        const batch = this.queued
        this.queued = { byDir: new Map(), waiters: [] }
        try {
          if (this.failure !== undefined) throw this.unavailable()
          await this.commit(batch)
          for (const w of batch.waiters) w.resolve()
        } catch (err) {
          // After a failed write or fsync the page cache cannot be trusted (fsyncgate): stop for good.
          this.failure ??= err
          for (const w of batch.waiters) w.reject(err instanceof RulekeeperError ? err : this.unavailable())
        }
      }
    } finally {
      this.running = undefined
    }
  }

  private async commit(batch: Batch): Promise<void> {
    const started = performance.now()
    const touched: OpenFile[] = []
    let lines = 0
    let bytes = 0
    await Promise.all(
      [...batch.byDir].map(async ([dir, list]) => {
        const file = await this.currentFile(dir)
        const buf = Buffer.from(list.join('\n') + '\n', 'utf8')
        await writeAll(file.fh, buf)
        file.size += buf.length
        file.lastUsed = started
        touched.push(file)
        lines += list.length
        bytes += buf.length
      }),
    )
    await Promise.all(touched.map((f) => f.fh.datasync()))
    this.opts.onCommit?.({ seconds: (performance.now() - started) / 1000, lines, bytes, files: touched.length })
    await this.rollAndTrim()
  }

  private async currentFile(dir: string): Promise<OpenFile> {
    const existing = this.files.get(dir)
    if (existing) return existing
    const absDir = path.join(this.opts.root, dir)
    await this.makeDurableDir(absDir)
    const name = `${this.opts.filePrefix}-${this.bootId}-${String(++this.seq).padStart(6, '0')}.ndjson`
    // 'wx': a name is never reused, so an existing file would mean two writers on one data dir.
    const fh = await open(path.join(absDir, name), 'wx', 0o644)
    await fsyncDir(absDir)
    const file = { fh, size: 0, lastUsed: performance.now() }
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

  private async rollAndTrim(): Promise<void> {
    for (const [dir, f] of this.files) {
      if (f.size >= this.opts.rollBytes) {
        this.files.delete(dir)
        await f.fh.close()
      }
    }
    if (this.files.size <= this.opts.maxOpenFiles) return
    const byAge = [...this.files].sort((a, b) => a[1].lastUsed - b[1].lastUsed)
    for (const [dir, f] of byAge.slice(0, this.files.size - this.opts.maxOpenFiles)) {
      this.files.delete(dir)
      await f.fh.close()
    }
  }
}

async function writeAll(fh: FileHandle, buf: Buffer): Promise<void> {
  let off = 0
  while (off < buf.length) {
    const { bytesWritten } = await fh.write(buf, off, buf.length - off)
    off += bytesWritten
  }
}

export async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r')
  try {
    await fh.sync()
  } finally {
    await fh.close()
  }
}
