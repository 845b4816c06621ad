// The last slot each scheduled query ran for, kept durable in the data directory
// (`scheduled-queries.json`, written whole with durable-file.ts) so a restart never runs a query
// twice for the same slot. A slot is recorded before its run starts: a run cut short by a crash is
// not run again for that slot (at most once; the next slot's run reads its own window). It is the
// one-process SlotGuard (state/slot-guard.ts): always leading, a slot recorded at `begin`.
import fs from 'node:fs'
import path from 'node:path'
import { writeFileDurable } from '../durable-file.js'
import type { Logger } from '../log.js'
import type { SlotGuard } from '../state/slot-guard.js'

const FILE = 'scheduled-queries.json'

export class SlotRecord implements SlotGuard {
  private readonly file: string
  private readonly last = new Map<string, number>()
  private writing: Promise<void> = Promise.resolve()

  constructor(
    dataDir: string,
    private readonly logger?: Logger,
  ) {
    this.file = path.join(dataDir, FILE)
    let text: string
    try {
      text = fs.readFileSync(this.file, 'utf8')
    } catch {
      return
    }
    try {
      const parsed = JSON.parse(text) as { lastSlots?: Record<string, unknown> }
      for (const [name, at] of Object.entries(parsed.lastSlots ?? {}))
        if (typeof at === 'string' && Number.isFinite(Date.parse(at))) this.last.set(name, Date.parse(at))
    } catch (err) {
      logger?.warn({ err, file: this.file }, 'the record of scheduled-query slots is unreadable; starting without it')
    }
  }

  /** The last slot the query ran for (ms), or undefined. */
  lastSlot(name: string): number | undefined {
    return this.last.get(name)
  }

  leading(): boolean {
    return true
  }

  /** Records the slot before its run; a slot not recorded is not run (a restart could not tell it ran). */
  async begin(job: string, slotMs: number, keep: ReadonlySet<string>): Promise<boolean> {
    try {
      await this.record(job, slotMs, keep)
      return true
    } catch (err) {
      this.logger?.error({ err, query: job }, 'cannot record the slot of a scheduled query; the run is skipped')
      return false
    }
  }

  /** Recorded at `begin` already. */
  async commit(): Promise<boolean> {
    return true
  }

  /** Records the slot (durable when the promise resolves); `keep`: the names still scheduled. */
  record(name: string, slotMs: number, keep: ReadonlySet<string>): Promise<void> {
    this.last.set(name, slotMs)
    for (const n of this.last.keys()) if (n !== name && !keep.has(n)) this.last.delete(n)
    const lastSlots: Record<string, string> = {}
    for (const [n, at] of [...this.last].sort((a, b) => (a[0] < b[0] ? -1 : 1)))
      lastSlots[n] = new Date(at).toISOString()
    const text = `${JSON.stringify({ version: 1, lastSlots }, null, 2)}\n`
    // Writes in order: the file ends with the newest state.
    this.writing = this.writing.then(
      () => writeFileDurable(this.file, text, { tmp: `${this.file}.tmp`, mode: 0o600 }),
      () => writeFileDurable(this.file, text, { tmp: `${this.file}.tmp`, mode: 0o600 }),
    )
    return this.writing
  }
}
