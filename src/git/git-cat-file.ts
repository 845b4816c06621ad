// Reads packed objects through the `git` binary (`git cat-file --batch`, one long-lived process per
// repository) where it is installed: the accelerator repository.md allows for bulk reads. Packs are
// what a fetch writes, so with a remote most objects are packed; isomorphic-git reads them ~30×
// slower (0.5 ms an object: a cold history build over 50k commits took ~4 minutes). Objects are
// content-addressed, so the bytes are the same either way; without git (or if the process fails)
// read-object-packed.ts falls back to isomorphic-git. In `sizes` mode (`--batch-check`) it answers
// an object's type and size without its content: what the reconciler asks before reading a blob.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { gitEnv } from './git-binary.js'
import type { ObjectType } from './hash-object.js'

const pipe = (s: unknown) => s as { ref?: () => void; unref?: () => void }

interface Answer {
  type: ObjectType
  size: number
  content: Buffer
}

interface Request {
  oid: string
  resolve(o: Answer | null): void
  reject(err: Error): void
}

/** A read git has not answered in this long means the process is stuck: it is ended. */
const READ_TIMEOUT_MS = 30_000

export class CatFileReader {
  private readonly child: ChildProcessWithoutNullStreams
  private readonly pending: Request[] = []
  private buf: Buffer = Buffer.alloc(0)
  /** Chunks received but not yet joined: a large object is joined once, not once per chunk. */
  private chunks: Buffer[] = []
  private received = 0
  /** Bytes the object being answered needs before it can be parsed (0: unknown yet). */
  private need = 0
  private failed: Error | null = null
  private watchdog: NodeJS.Timeout | undefined

  constructor(
    gitdir: string,
    private readonly mode: 'contents' | 'sizes' = 'contents',
  ) {
    const batch = mode === 'sizes' ? '--batch-check' : '--batch'
    this.child = spawn('git', ['--git-dir', gitdir, 'cat-file', batch], { env: gitEnv(), stdio: 'pipe' })
    this.child.stdout.on('data', (chunk: Buffer) => this.onData(chunk))
    this.child.on('error', (err) => this.fail(err))
    this.child.on('exit', (code, signal) => this.fail(new Error(`git cat-file exited (${signal ?? code})`)))
    this.child.stdin.on('error', (err) => this.fail(err))
    this.child.stderr.resume()
    // An idle reader must not keep the process alive; one with a read in flight must (hold()).
    this.child.unref()
    for (const s of [this.child.stdin, this.child.stdout, this.child.stderr]) pipe(s).unref?.()
  }

  /** Keeps the event loop alive while reads are pending, and watches that answers keep coming. */
  private hold(on: boolean): void {
    const out = pipe(this.child.stdout)
    if (on) out.ref?.()
    else out.unref?.()
    clearTimeout(this.watchdog)
    if (on) {
      this.watchdog = setTimeout(
        () => this.fail(new Error(`git cat-file answered nothing for ${READ_TIMEOUT_MS / 1000} s`)),
        READ_TIMEOUT_MS,
      )
      this.watchdog.unref()
    }
  }

  get broken(): boolean {
    return this.failed !== null
  }

  /** The object, or null when git says it is missing. Rejects when the process failed. */
  async read(oid: string): Promise<{ type: ObjectType; content: Buffer } | null> {
    const a = await this.ask(oid)
    return a && { type: a.type, content: a.content }
  }

  /** The object's type and size (its content is not read), or null when it is missing. */
  async info(oid: string): Promise<{ type: ObjectType; size: number } | null> {
    const a = await this.ask(oid)
    return a && { type: a.type, size: a.size }
  }

  private ask(oid: string): Promise<Answer | null> {
    if (this.failed) return Promise.reject(this.failed)
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) this.hold(true)
      this.pending.push({ oid, resolve, reject })
      this.child.stdin.write(`${oid}\n`)
    })
  }

  private onData(chunk: Buffer): void {
    this.chunks.push(chunk)
    this.received += chunk.length
    if (this.received < this.need) return
    this.buf = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.received)
    this.chunks = []
    this.received = 0
    this.need = 0
    this.parse()
    if (this.buf.length > 0) {
      this.chunks = [this.buf]
      this.received = this.buf.length
    }
    this.buf = Buffer.alloc(0)
  }

  private parse(): void {
    for (;;) {
      const req = this.pending[0]
      if (!req) {
        this.hold(false)
        return
      }
      const nl = this.buf.indexOf(0x0a)
      if (nl === -1) {
        this.need = this.buf.length + 1
        return
      }
      const header = this.buf.subarray(0, nl).toString('latin1')
      const parts = header.split(' ')
      if (parts[1] === 'missing' || parts[1] === 'ambiguous') {
        this.buf = this.buf.subarray(nl + 1)
        this.pending.shift()
        req.resolve(null)
        continue
      }
      const size = Number(parts[2])
      if (parts[0] !== req.oid || parts.length !== 3 || !Number.isSafeInteger(size)) {
        this.fail(new Error(`git cat-file answered ${JSON.stringify(header.slice(0, 100))} for ${req.oid}`))
        return
      }
      const type = parts[1] as ObjectType
      if (this.mode === 'sizes') {
        this.buf = this.buf.subarray(nl + 1)
        this.pending.shift()
        req.resolve({ type, size, content: Buffer.alloc(0) })
        if (this.pending.length > 0) this.hold(true)
        continue
      }
      // Header, content, and the newline that ends every object.
      if (this.buf.length < nl + 1 + size + 1) {
        this.need = nl + 1 + size + 1
        return
      }
      const content = Buffer.from(this.buf.subarray(nl + 1, nl + 1 + size))
      this.buf = this.buf.subarray(nl + 1 + size + 1)
      this.pending.shift()
      req.resolve({ type, size, content })
      if (this.pending.length > 0) this.hold(true) // an answer came: the watchdog starts over
    }
  }

  private fail(err: Error): void {
    if (this.failed) return
    this.failed = err
    for (const r of this.pending.splice(0)) r.reject(err)
    this.hold(false)
    this.child.kill()
  }

  close(): void {
    this.fail(new Error('closed'))
  }
}
