// The ids of the commits this service made itself (API writes and restores, the template seed), so
// that `Actor-Id`/`Actor-Type` trailers are believed on those commits only: anyone who can push can
// write any trailer. Kept behind a small interface; today an append-only file in the data directory
// (one commit id per line, written before the branch moves to the commits, fsynced after), later a
// shared store.
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { fsyncDir } from '../durable-file.js'

export interface ServiceCommits {
  /** Whether the service made this commit (so its trailers are its own). */
  has(oid: string): boolean
  /**
   * Records commits the service built, before any branch or remote points at them: a crash of the
   * process after this keeps them (durable against a power cut only after `sync`).
   */
  record(oids: readonly string[]): Promise<void>
  /** Makes what was recorded durable (kept out of the span between building and pushing commits). */
  sync(): Promise<void>
}

const OID = /^[0-9a-f]{40}$/

/** The store as a file: `<commit id>\n` per commit, appended and fsynced. */
export class ServiceCommitFile implements ServiceCommits {
  private readonly oids = new Set<string>()
  private unsynced = false

  /** Reads the file (a torn last line, from a crash mid-append, is ignored). */
  constructor(private readonly file: string) {
    let text = ''
    try {
      text = fs.readFileSync(file, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
    for (const line of text.split('\n')) if (OID.test(line)) this.oids.add(line)
  }

  has(oid: string): boolean {
    return this.oids.has(oid)
  }

  async record(oids: readonly string[]): Promise<void> {
    const fresh = oids.filter((o) => OID.test(o) && !this.oids.has(o))
    if (fresh.length === 0) return
    const existed = fs.existsSync(this.file)
    const fh = await fsp.open(this.file, 'a+', 0o600)
    try {
      // A torn line left by a crash must not swallow the first id written now.
      const { size } = await fh.stat()
      const last = Buffer.alloc(1)
      if (size > 0) await fh.read(last, 0, 1, size - 1)
      const lead = size > 0 && last[0] !== 0x0a ? '\n' : ''
      await fh.appendFile(`${lead}${fresh.join('\n')}\n`)
    } finally {
      await fh.close()
    }
    if (!existed) await fsyncDir(path.dirname(this.file))
    for (const o of fresh) this.oids.add(o)
    this.unsynced = true
  }

  async sync(): Promise<void> {
    if (!this.unsynced) return
    this.unsynced = false
    const fh = await fsp.open(this.file, 'r')
    try {
      await fh.sync()
    } finally {
      await fh.close()
    }
  }
}

/** The store in memory (no data directory: tests of the parts, tools). */
export class MemoryServiceCommits implements ServiceCommits {
  private readonly oids = new Set<string>()
  has(oid: string): boolean {
    return this.oids.has(oid)
  }
  async record(oids: readonly string[]): Promise<void> {
    for (const o of oids) this.oids.add(o)
  }
  async sync(): Promise<void> {}
}
