// Durable detection output under `<data dir>/detections/`: matches and signals (Hive partitions by
// event time), the alert journal (one line per group change, without the alert context, which is
// stored once: in the match line that opened the alert, else in `contexts/`; the last line of an id wins; a start reads it after its snapshot,
// alert-journal.ts), rule errors (a start reads back only the newest), and the checkpoint that ties them together. A commit appends and fdatasyncs (the new
// checkpoint's temp file is written and fsynced meanwhile), then renames the temp over the
// checkpoint once all of it is durable: it names every output file with its committed length
// and how far each log file was evaluated. At start, anything past the checkpoint is cut off, so
// the records after it are evaluated again and nothing is written twice; a failed commit cuts back
// what it appended at once. The file store of the DetectionLedger contract (detection-ledger.ts).
import { randomBytes } from 'node:crypto'
import { mkdir, open, readFile, rename, stat, truncate, unlink, type FileHandle } from 'node:fs/promises'
import path from 'node:path'
import { listSorted } from '../dir-list.js'
import { unavailable } from '../errors.js'
import { fsyncDir, writeFileDurable } from '../durable-file.js'
import type { Logger } from '../log.js'
import { AlertEventIndex } from './alert-events.js'
import { groupLine, loadAlertJournal, readContextAt, writeAlertIndex } from './alert-journal.js'
import type { Checkpoint, CheckpointUpdate, DetectionLedger, RuleErrorRecord } from './detection-ledger.js'
import type { ContextRef, Group } from './grouping.js'
import { DEFAULT_MAX_ERRORS } from './rule-error-window.js'
import { listDataFiles, type Location, partitionsMeeting } from './stored-log.js'
import { tailLines } from './tail-lines.js'

interface Out {
  fh: FileHandle | null
  size: number
  pending: string[]
  /** size plus the pending lines' bytes: where the next line added will be. */
  staged: number
}

const EMPTY: Checkpoint = { version: 1, logs: {}, outputs: {}, lastKey: null, evaluatedAt: null, records: 0 }

async function walk(root: string, rel = ''): Promise<string[]> {
  const out: string[] = []
  for (const n of await listSorted(path.join(root, rel))) {
    const r = rel ? path.join(rel, n) : n
    if (n.endsWith('.ndjson')) out.push(r)
    else if (!n.includes('.')) out.push(...(await walk(root, r)))
  }
  return out
}

export class DetectionStore implements DetectionLedger {
  private readonly boot = `${new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}-${randomBytes(3).toString('hex')}`
  private readonly outs = new Map<string, Out>()
  private readonly newDirs = new Set<string>()
  private tail: Promise<unknown> = Promise.resolve()
  /** `detections/` itself, open once a commit has fsynced it (the checkpoint's rename). */
  private rootFh: FileHandle | null = null
  private journal: string
  private readonly contexts: string
  /** Journal bytes when the alert index snapshot was last written, and that snapshot's size. */
  private indexed = { journal: 0, size: 0, writing: false }
  /** Journal lines in the journals (the snapshot's cover counts them). */
  private journalLines = 0
  /** Where each alert's matches are (built on first use: GET /alerts/{id}/events). */
  private events: AlertEventIndex | null = null
  /** Set when a failed commit could not be taken back: later commits fail with it. */
  private broken: Error | null = null

  private constructor(
    readonly root: string,
    public checkpoint: Checkpoint,
    /** The groups as the journal left them (read once at start). */
    readonly groups: Group[],
    readonly errors: RuleErrorRecord[],
  ) {
    this.journal = path.join('alerts', `alerts-${this.boot}.ndjson`)
    this.contexts = path.join('contexts', `contexts-${this.boot}.ndjson`)
  }

  static async open(dataDir: string, logger: Logger): Promise<DetectionStore> {
    const root = path.join(dataDir, 'detections')
    await mkdir(root, { recursive: true })
    let checkpoint = EMPTY
    try {
      checkpoint = JSON.parse(await readFile(path.join(root, 'checkpoint.json'), 'utf8')) as Checkpoint
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
    // Cut every output back to the checkpoint: what is past it was never committed.
    let cut = 0
    for (const rel of await walk(root)) {
      const committed = checkpoint.outputs[rel]
      const size = (await stat(path.join(root, rel))).size
      if (committed === undefined) {
        await unlink(path.join(root, rel))
        cut += size
      } else if (size > committed) {
        await truncate(path.join(root, rel), committed)
        cut += size - committed
      } else if (size < committed)
        logger.error({ file: rel, size, committed }, 'a detection file is shorter than committed')
    }
    if (cut > 0) logger.warn({ bytes: cut }, 'cut uncommitted detection output back to the checkpoint')
    const journals = (await walk(root, 'alerts')).map((rel) => ({ rel, length: checkpoint.outputs[rel] ?? 0 }))
    const { groups: byId, lines: journalLines, tailLines: journalTail } = await loadAlertJournal(root, journals, logger)
    // Rule errors: only the newest (the alert book keeps no more in memory), read from the files' ends.
    const errorFiles = (await walk(root, 'rule-errors')).map((rel) => ({
      file: path.join(root, rel),
      length: checkpoint.outputs[rel] ?? 0,
    }))
    const errors = (await tailLines(errorFiles, DEFAULT_MAX_ERRORS)).map((l) => JSON.parse(l) as RuleErrorRecord)
    const store = new DetectionStore(root, checkpoint, [...byId.values()], errors)
    // Compaction: a journal much longer than its groups is rewritten as one line per group.
    store.journalLines = journalLines
    if (journalLines > 2 * byId.size + 10_000) await store.compact()
    else if (journalTail > 1000) await store.saveIndex(() => store.groups, true)
    return store
  }

  private async compact(): Promise<void> {
    const rel = this.journal
    await mkdir(path.join(this.root, 'alerts'), { recursive: true })
    // A context kept in an old journal line (older versions) moves inline into the new journal.
    let size = 0
    await writeFileDurable(path.join(this.root, rel), async (fh) => {
      for (const g of this.groups) {
        const inline = g.contextAt?.file.startsWith('alerts/') ? await this.readContext(g.contextAt) : null
        const line = Buffer.from(
          `${inline ? JSON.stringify({ ...g, alertContext: inline, contextAt: undefined }) : groupLine(g)}\n`,
        )
        if (inline) g.contextAt = { file: rel, offset: size, length: line.length - 1 }
        await fh.write(line)
        size += line.length
      }
    })
    const outputs: Record<string, number> = {}
    for (const [f, n] of Object.entries(this.checkpoint.outputs)) if (!f.startsWith('alerts/')) outputs[f] = n
    outputs[rel] = size
    this.journalLines = this.groups.length
    const old = Object.keys(this.checkpoint.outputs).filter((f) => f.startsWith('alerts/') && f !== rel)
    this.checkpoint = { ...this.checkpoint, outputs }
    await this.writeCheckpoint()
    for (const f of old) await unlink(path.join(this.root, f)).catch(() => {})
    this.outs.set(rel, { fh: null, size, pending: [], staged: size })
    await this.saveIndex(() => this.groups, true)
  }

  /** Stages a line; answers its byte offset in the file. */
  private add(rel: string, line: string): number {
    let o = this.outs.get(rel)
    if (!o) {
      const size = this.checkpoint.outputs[rel] ?? 0
      o = { fh: null, size, pending: [], staged: size }
      this.outs.set(rel, o)
    }
    o.pending.push(line)
    const at = o.staged
    o.staged += Buffer.byteLength(line) + 1
    return at
  }

  addMatch(eventTime: string, match: Record<string, unknown> | string): ContextRef | undefined {
    const dir = `matches/dt=${eventTime.slice(0, 10)}/hour=${eventTime.slice(11, 13)}`
    const file = path.join(dir, `matches-${this.boot}.ndjson`)
    const line = typeof match === 'string' ? match : JSON.stringify(match)
    const offset = this.add(file, line)
    const c = typeof match === 'string' ? {} : match.alertContext
    return typeof c === 'object' && c !== null ? { file, offset, length: Buffer.byteLength(line) } : undefined
  }

  /** Stages a group's journal line; a context no match line holds goes to `contexts/` the first time (`contextAt` says where). */
  addGroup(g: Group): void {
    if (g.contextAt === undefined && g.alertContext !== null) {
      const line = JSON.stringify({ id: g.id, alertContext: g.alertContext })
      g.contextAt = { file: this.contexts, offset: this.add(this.contexts, line), length: Buffer.byteLength(line) }
    }
    this.add(this.journal, groupLine(g))
    this.journalLines++
  }

  /** The alert context at `ref`, once committed. */
  readContext(ref: ContextRef): Promise<Record<string, unknown>> {
    if (ref.offset + ref.length > this.committedLength(ref.file))
      return Promise.reject(new Error(`the alert context at ${ref.file}:${ref.offset} is not committed`))
    return readContextAt(this.root, ref)
  }

  /**
   * Writes the alert index snapshot (alert-journal.ts) when the journal has grown by more than the
   * last snapshot's size (or 1 MiB) since it, or when `force`d: after the commits under way, and
   * only if nothing is staged and `idle` gives the groups (the book has nothing uncommitted).
   */
  async saveIndex(idle: () => Iterable<Group> | null, force = false): Promise<void> {
    if (this.indexed.writing) return
    this.indexed.writing = true
    try {
      const tail = this.tail
      await tail
      if (this.tail !== tail) return // a commit started meanwhile: the groups hold what it has not made durable
      const cover = { journals: {} as Record<string, number>, lines: 0 }
      let bytes = 0
      for (const [f, n] of Object.entries(this.checkpoint.outputs))
        if (f.startsWith('alerts/')) {
          cover.journals[f] = n
          bytes += n
        }
      if (!force && bytes - this.indexed.journal < Math.max(1 << 20, this.indexed.size)) return
      if ([...this.outs.values()].some((o) => o.pending.length > 0)) return
      const groups = idle()
      if (!groups) return
      const list = [...groups]
      if (list.some((g) => g.contextAt === undefined && g.alertContext !== null)) return
      cover.lines = this.journalLines
      this.indexed.size = await writeAlertIndex(this.root, cover, list)
      this.indexed.journal = bytes
    } finally {
      this.indexed.writing = false
    }
  }

  addError(e: RuleErrorRecord): void {
    this.add(path.join(`rule-errors/dt=${e.time.slice(0, 10)}`, `errors-${this.boot}.ndjson`), JSON.stringify(e))
  }

  /**
   * Makes everything added so far durable, then moves the checkpoint (with `logs` merged in).
   * Commits run one at a time, in call order.
   */
  commit(update: CheckpointUpdate = {}): Promise<void> {
    // Take what is pending now, synchronously, so a later add belongs to the next commit.
    const work: Array<[string, Out, Buffer]> = []
    for (const [rel, o] of this.outs) {
      if (o.pending.length === 0) continue
      work.push([rel, o, Buffer.from(`${o.pending.join('\n')}\n`)])
      o.pending = []
    }
    const run = this.tail.then(async () => {
      if (this.broken) throw this.broken
      const before = work.map(([, o]) => o.size)
      // The next checkpoint is known before the writes (each output grows by its buffer): its temp
      // file is written and fsynced beside the outputs' appends and fdatasyncs, and renamed over
      // the checkpoint only once all of them are durable (one fsync less in a row per commit).
      const outputs = { ...this.checkpoint.outputs }
      for (const [rel, o] of this.outs) if (o.fh) outputs[rel] = o.size
      for (const [rel, o, buf] of work) outputs[rel] = o.size + buf.length
      const next: Checkpoint = {
        version: 1,
        logs: update.logs ? { ...this.checkpoint.logs, ...update.logs } : this.checkpoint.logs,
        outputs,
        lastKey: update.lastKey === undefined ? this.checkpoint.lastKey : update.lastKey,
        evaluatedAt: update.logs ? new Date().toISOString() : this.checkpoint.evaluatedAt,
        records: this.checkpoint.records + (update.records ?? 0),
      }
      const behind = update.behind === undefined ? this.checkpoint.behind : update.behind
      if (behind && Object.keys(behind).length > 0) next.behind = behind
      const file = path.join(this.root, 'checkpoint.json')
      const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
      let closing: Promise<void> = Promise.resolve()
      const written = await Promise.allSettled([
        (async () => {
          const fh = await open(tmp, 'w', 0o666)
          try {
            await fh.writeFile(JSON.stringify(next))
            await fh.sync()
          } finally {
            closing = fh.close() // awaited with the rename: a renamed file may still be open
          }
        })(),
        ...work.map(async ([rel, o, buf]) => {
          if (!o.fh) {
            const abs = path.join(this.root, rel)
            const dir = path.dirname(abs)
            if (!this.newDirs.has(dir)) {
              await mkdir(dir, { recursive: true })
              // the new folders' entries: detections/, the kind, dt=, hour=
              for (let d = dir; d.startsWith(this.root) && d !== path.dirname(this.root); d = path.dirname(d))
                await fsyncDir(path.dirname(d))
              this.newDirs.add(dir)
            }
            o.fh = await open(abs, 'a', 0o600)
            await fsyncDir(dir)
          }
          let off = 0
          while (off < buf.length) off += (await o.fh.write(buf, off, buf.length - off)).bytesWritten
          await o.fh.datasync()
          o.size += buf.length
        }),
      ])
      const failed = written.find((r) => r.status === 'rejected')
      if (failed) {
        await closing.catch(() => {})
        await unlink(tmp).catch(() => {})
        await this.rollBack(work, before)
        throw failed.reason
      }
      this.checkpoint = next
      // Each await is a turn of the event loop, which ingest keeps busy: the folder stays open
      // (one fsync, not open, fsync, close), and the temp's close goes beside the rename.
      await Promise.all([rename(tmp, file), closing])
      this.rootFh ??= await open(this.root, 'r')
      await this.rootFh.sync()
    })
    this.tail = run.catch(() => undefined)
    return run
  }

  /**
   * A failed commit takes back what it appended: each output it wrote to is cut back to its length
   * before the commit, so no later commit makes those lines durable (their records are evaluated
   * again from the checkpoint, which never moved). When an output cannot be cut back, every later
   * commit fails until the store is opened again (which cuts everything back to the checkpoint).
   * The same when lines were staged for that output meanwhile: the offsets handed out for them
   * (an alert context's `contextAt`) counted this commit's bytes, which are gone.
   */
  private async rollBack(work: ReadonlyArray<[string, Out, Buffer]>, before: readonly number[]): Promise<void> {
    for (const [i, [rel, o]] of work.entries()) {
      try {
        if (o.fh) await o.fh.truncate(before[i]!)
        o.size = before[i]!
      } catch (err) {
        this.broken = unavailable(
          `detection output ${rel} could not be cut back after a failed commit (${String(err)}): no more commits until a restart`,
        )
        continue
      }
      if (o.pending.length === 0) o.staged = o.size
      else
        this.broken ??= unavailable(
          `lines were staged for detection output ${rel} after a commit that failed: no more commits until a restart`,
        )
    }
  }

  private async writeCheckpoint(): Promise<void> {
    await writeFileDurable(path.join(this.root, 'checkpoint.json'), JSON.stringify(this.checkpoint))
  }

  /** Match files (relative to `detections/`) of the event hours from one time to another, inclusive, in time order. */
  matchFiles(fromMs: number, toMs: number): Promise<string[]> {
    return listDataFiles(this.root, 'matches', partitionsMeeting(fromMs, toMs + 1))
  }

  /** How much of an output file is committed: a reader never reads a line a crash could take back. */
  committedLength(rel: string): number {
    return this.checkpoint.outputs[rel] ?? 0
  }

  /**
   * Match lines of the partitions between two event times (inclusive hours) that `keep` accepts;
   * `quick`, when given, drops lines by their text before they are parsed (a cheap pre-filter:
   * `keep` still decides). Yields to the event loop every few thousand lines.
   */
  async readMatches(
    fromMs: number,
    toMs: number,
    keep: (m: Record<string, unknown>) => boolean,
    quick?: (line: string) => boolean,
  ): Promise<Array<Record<string, unknown>>> {
    const out: Array<Record<string, unknown>> = []
    for (const file of await this.matchFiles(fromMs, toMs)) {
      const committed = this.committedLength(file)
      const text = (await readFile(path.join(this.root, file))).subarray(0, committed).toString('utf8')
      let parsed = 0
      for (const line of text.split('\n')) {
        if (line === '' || (quick && !quick(line))) continue
        if (++parsed % 5000 === 0) await new Promise((r) => setImmediate(r))
        const m = JSON.parse(line) as Record<string, unknown>
        if (keep(m)) out.push(m)
      }
    }
    return out
  }

  alertEvents(g: Group): Promise<Location[]> {
    this.events ??= new AlertEventIndex(this)
    return this.events.locations(g)
  }

  async close(): Promise<void> {
    await this.tail
    for (const o of this.outs.values()) await o.fh?.close()
    this.outs.clear()
    await this.rootFh?.close()
    this.rootFh = null
  }
}
