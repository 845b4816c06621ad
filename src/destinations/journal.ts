// The delivery journal, `<data dir>/destinations/deliveries.ndjson`: one line per change of a
// delivery's state (an attempt's outcome, a redelivery request), fdatasynced before the change is
// acted on; the last line of an (alert, destination) pair wins. With the alert journal, which holds
// each alert's routed destinations from the commit that created it, it is the durable outbox: a
// delivery with no line, or whose last line is `pending`, is sent again after a restart.
import { mkdir, open, readFile, truncate, type FileHandle } from 'node:fs/promises'
import path from 'node:path'
import { writeFileDurable } from '../durable-file.js'

export type DeliveryState = 'pending' | 'delivered' | 'failed'

export interface JournalLine {
  /** alert id, destination id */
  a: string
  d: string
  s: DeliveryState
  /** attempts of the current round (a redelivery starts a new round) */
  n: number
  e: string | null
  /** start of the current round's budget, and the time of the next attempt (ms since epoch) */
  b: number
  at: number
}

export const keyOf = (alertId: string, destId: string) => `${alertId}\u0000${destId}`

export class DeliveryJournal {
  private fh: FileHandle | null = null
  private queue: Array<{ line: string; done: () => void; fail: (e: unknown) => void }> = []
  private writing: Promise<void> | null = null

  private constructor(
    readonly file: string,
    /** The last line of every pair, as read at start. */
    readonly last: Map<string, JournalLine>,
  ) {}

  static async open(dataDir: string): Promise<DeliveryJournal> {
    const dir = path.join(dataDir, 'destinations')
    await mkdir(dir, { recursive: true })
    const file = path.join(dir, 'deliveries.ndjson')
    let text = ''
    try {
      text = await readFile(file, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
    // A crash during an append can leave a torn last line: cut it, so the next append starts clean.
    const end = text.lastIndexOf('\n') + 1
    if (end < text.length) {
      await truncate(file, Buffer.byteLength(text.slice(0, end)))
      text = text.slice(0, end)
    }
    const last = new Map<string, JournalLine>()
    let lines = 0
    for (const l of text.split('\n')) {
      if (l === '') continue
      lines++
      try {
        const j = JSON.parse(l) as JournalLine
        last.set(keyOf(j.a, j.d), j)
      } catch {
        // a line cut by a crash before the fix above existed: nothing to restore from it
      }
    }
    if (lines > 2 * last.size + 10_000)
      await writeFileDurable(file, [...last.values()].map((j) => `${JSON.stringify(j)}\n`).join(''))
    return new DeliveryJournal(file, last)
  }

  /** Durable once the promise resolves; appends made meanwhile share one write and one fdatasync. */
  append(line: JournalLine): Promise<void> {
    return new Promise((done, fail) => {
      this.queue.push({ line: `${JSON.stringify(line)}\n`, done, fail })
      this.writing ??= this.drain().finally(() => {
        this.writing = null
      })
    })
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue
      this.queue = []
      try {
        this.fh ??= await open(this.file, 'a', 0o600)
        const buf = Buffer.from(batch.map((b) => b.line).join(''))
        let off = 0
        while (off < buf.length) off += (await this.fh.write(buf, off, buf.length - off)).bytesWritten
        await this.fh.datasync()
        for (const b of batch) b.done()
      } catch (err) {
        for (const b of batch) b.fail(err)
      }
    }
  }

  async close(): Promise<void> {
    while (this.writing) await this.writing
    await this.fh?.close()
    this.fh = null
  }
}
