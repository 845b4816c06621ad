// The log-reading loop of live detection: follows the stored log (durable batches announced by the
// log sources, and at start everything past the checkpoint), takes its records in stored order in
// chunks, has each chunk evaluated with every enabled rule of its log type at the revision served
// when the chunk starts (chunk-pass.ts), and commits the alert book's output every batch with the
// log offsets reached (alert-book.ts). It runs beside ingest, never inside a request: ingest never
// waits for it. A Python rule its engine runs apart is late (late-rules.ts): the chunk goes on
// without it, its answers are passed and committed when they come, and the checkpoint says what it
// still owes (a restart evaluates those records again for it alone: the catch-up).
import { TurnBudget } from '../turn-budget.js'
import path from 'node:path'
import type { Logger } from '../log.js'
import type { RuleIndex } from '../rules/rule-index.js'
import type { AlertBook } from './alert-book.js'
import { passChunk, type PassCounts, type StartedChunk, startChunk } from './chunk-pass.js'
import type { DetectMetrics } from './detect-metrics.js'
import type { RuleErrorRecord } from './detection-ledger.js'
import type { LiveEngines } from '../engine/engine.js'
import type { RecordEvaluations } from './evaluate-records.js'
import { LateRules } from './late-rules.js'
import { buildLiveIndex, type LiveIndex, type LiveRule } from './live-rules.js'
import { RuleWorker } from './rule-worker.js'
import { chunkFor, LineCursor, sizedDataFiles, type StoredRecord } from './stored-log.js'
import { StoredLogMerge } from './stored-merge.js'

/** What the loop uses of the alert book: the checkpoint, its commits, and the queue a chunk fills. */
export type LoopBook = Pick<
  AlertBook,
  'checkpoint' | 'commit' | 'hold' | 'release' | 'commitWaiting' | 'discardLoop' | 'addError' | 'addMatch'
>

export interface DetectorOptions {
  dataDir: string
  /** A shared events directory and this replica's folder in it (the only one evaluated); default `<data dir>/logs`. */
  events?: { root: string; own: string }
  logTypes: readonly string[]
  catalog: { readonly index: RuleIndex }
  /** The engines whose `live` members evaluate the records (engine/live.ts). */
  engines: LiveEngines
  /** Where the output goes, and the checkpoint (the alert book). */
  book: LoopBook
  logger: Logger
  metrics?: Pick<DetectMetrics, 'records' | 'evaluations' | 'lag'>
  /** Records per commit (default 5,000). */
  batchRecords?: number
  /** Rules with offloadable data on a worker thread (rule-worker.ts; default true); false: all in-process. */
  ruleWorker?: boolean
}

export class Detector {
  private readonly logsRoot: string
  /** Durable length of each log file announced or found, beyond what is evaluated. */
  private readonly durable = new Map<string, number>()
  private live: LiveIndex | null = null
  private readonly ruleWorker: RuleWorker | null
  private liveFrom: RuleIndex | null = null
  private running: Promise<void> | null = null
  private again = false
  /** The last commit of the stored-log runs, while it is not durable (the next run may go on meanwhile). */
  private inFlight: Promise<void> | null = null
  private committing = false
  /** How far each log file is evaluated, committed or not: where the next run starts. */
  private readonly evaluatedTo = new Map<string, number>()
  private closed = false
  private pendingSince: number | null = null
  private failure: unknown = null
  /** Records and rule evaluations since the last commit: the metrics move once per commit. */
  private counted: PassCounts = { records: 0, evaluations: 0 }
  /** Rules whose answers come later, and what rules owed at start. */
  private readonly late: LateRules
  /** Where the catch-up of rules owing records at start begins, per log file. */
  private readonly startFrom = new Map<string, number>()
  /** The checkpoint's offsets at start: records before them are evaluated only for rules that owed them. */
  private catchUpTo: Readonly<Record<string, number>> = {}
  private answered: Array<() => void> = []

  constructor(private readonly o: DetectorOptions) {
    this.logsRoot = o.events?.root ?? path.join(o.dataDir, 'logs')
    this.ruleWorker =
      o.ruleWorker === false
        ? null
        : new RuleWorker((message) =>
            o.logger.warn({ message }, 'rules are evaluated in-process from now on (rule worker failed)'),
          )
    this.late = new LateRules(() => {
      for (const w of this.answered.splice(0)) w()
      this.kick()
    })
  }

  /** Finds every log file past the checkpoint, then evaluates; call once the log sources are open. */
  async start(): Promise<void> {
    const cp = this.o.book.checkpoint
    this.late.carry(cp.behind)
    this.catchUpTo = { ...cp.logs }
    for (const b of Object.values(cp.behind ?? {}))
      for (const [file, from] of Object.entries(b.logs))
        if (from < (cp.logs[file] ?? 0)) this.startFrom.set(file, Math.min(from, this.startFrom.get(file) ?? from))
    const own = this.o.events?.own ? `${this.o.events.own}/` : ''
    for (const lt of this.o.logTypes) this.announce(await sizedDataFiles(this.logsRoot, `${own}${lt}`))
    this.kick()
  }

  /** A durable batch of the log sources (in commit order). */
  announce(files: ReadonlyArray<{ file: string; size: number }>): void {
    for (const { file, size } of files) {
      if (size > (this.durable.get(file) ?? 0)) this.durable.set(file, size)
      if (size > (this.o.book.checkpoint.logs[file] ?? 0)) this.pendingSince ??= Date.now()
    }
  }

  /** How much of a log file is known durable (replay reads no further); 0 when never announced. */
  durableLength(file: string): number {
    return this.durable.get(file) ?? 0
  }

  /** Announces and starts a run when none is going (a run in progress takes another turn). */
  notify(files: ReadonlyArray<{ file: string; size: number }>): void {
    this.announce(files)
    this.kick()
  }

  private kick(): void {
    if (this.closed || this.failure !== null) return
    if (this.running) {
      this.again = true
      return
    }
    this.o.book.hold()
    this.running = (async () => {
      try {
        // A turn asked for while the last commit settles (new records, late answers) is taken too.
        do {
          do {
            this.again = false
            await this.runOnce()
          } while (this.again && !this.closed)
          await this.inFlight
          await this.o.book.commitWaiting()
        } while (this.again && !this.closed)
      } catch (err) {
        this.late.clear()
        // Stopped until the next start, which evaluates again from the checkpoint: the matches,
        // rule errors and group changes queued past it are dropped, so no later commit of the book
        // (a status change, a correlation run) writes them beside their second evaluation.
        this.failure = err
        // A commit still in flight settles first: one that succeeds is durable and must not be
        // rolled back with the run's undone changes (the book rolls back only what failed).
        await this.inFlight?.catch(() => {})
        this.o.book.discardLoop()
        this.o.logger.error({ err }, 'detection stopped: it resumes from its checkpoint at the next start')
      } finally {
        this.o.book.release()
        this.running = null
        if (this.failure !== null) for (const w of this.answered.splice(0)) w()
      }
      // Output made beside a run that failed still gets its commit (nobody waits on a dead loop).
      if (this.failure !== null) await this.o.book.commitWaiting().catch(() => {})
    })()
  }

  /** Waits until everything announced so far is evaluated and committed (tests, shutdown). */
  async idle(): Promise<void> {
    for (;;) {
      if (this.running) await this.running
      else if (this.late.pending && !this.closed && this.failure === null)
        await new Promise<void>((resolve) => this.answered.push(resolve))
      else return
    }
  }

  status(): {
    checkpoint: { records: number; evaluatedAt: string | null; lastKey: string | null }
    lagSeconds: number
    failed: boolean
    lateRules: Array<{ ruleId: string; records: number; since: string }>
  } {
    const cp = this.o.book.checkpoint
    return {
      checkpoint: { records: cp.records, evaluatedAt: cp.evaluatedAt, lastKey: cp.lastKey },
      lagSeconds: this.pendingSince === null ? 0 : (Date.now() - this.pendingSince) / 1000,
      failed: this.failure !== null,
      lateRules: this.late.status(),
    }
  }

  /** The live rules, and the rule errors of rules that do not compile when the revision is new. */
  private currentRules(): { live: LiveIndex; broken: RuleErrorRecord[] } {
    const index = this.o.catalog.index
    const broken: RuleErrorRecord[] = []
    if (this.live === null || this.liveFrom !== index) {
      this.live = buildLiveIndex(index, this.o.engines)
      this.liveFrom = index
      const time = new Date().toISOString()
      for (const b of this.live.broken)
        broken.push({ ruleId: b.meta.id, revision: b.meta.revision, time, record: null, error: b.error })
    }
    if (this.late.carrying) broken.push(...this.late.revisionNotices(this.live))
    return { live: this.live, broken }
  }

  private async runOnce(): Promise<void> {
    const cp = this.o.book.checkpoint
    const work: Array<[string, number, number]> = []
    for (const [file, size] of this.durable) {
      const from = this.evaluatedTo.get(file) ?? Math.min(cp.logs[file] ?? 0, this.startFrom.get(file) ?? Infinity)
      if (size > from) work.push([file, from, size])
    }
    // Late answers that came meanwhile: passed now, committed with this run's first commit.
    const passedLate = this.late.passReady(this.o.book)
    if (work.length === 0 && passedLate > 0) {
      await this.inFlight
      const commit = this.o.book.commit({ behind: this.late.owed() })
      this.inFlight = commit
      await commit
    }
    if (work.length === 0) {
      // The lag is zero once the previous run's last commit is durable (and nothing came meanwhile).
      await this.inFlight
      if (![...this.durable].some(([f, size]) => size > (this.o.book.checkpoint.logs[f] ?? 0))) this.pendingSince = null
      return
    }
    const startedAt = Date.now()
    const chunk = chunkFor(work.length)
    const cursors = work.map(([file, from, to]) => new LineCursor(this.logsRoot, file, from, to, chunk))
    const batchMax = this.o.batchRecords ?? 5000
    let offsets: Record<string, number> = {}
    let count = 0
    let last: StoredRecord | null = null
    let lagSum: number[] = []
    // One commit may be in flight while the next batch is evaluated (commits stay in order, each
    // takes its batch's output synchronously); the last one is awaited before the run ends, unless
    // another run is due: that one reads on from `evaluatedTo` meanwhile (its first flush awaits
    // it, and the loop in kick() awaits the last; a failed commit stops detection). While
    // it is in flight the next batch keeps growing (up to 10 × batchRecords): when fsyncs are slow
    // (ingest shares the disk and the I/O threads) fewer, larger commits keep detection up to date.
    const flush = async (final: boolean) => {
      this.o.metrics?.records.inc(this.counted.records)
      this.o.metrics?.evaluations.inc(this.counted.evaluations)
      this.counted = { records: 0, evaluations: 0 }
      if (this.inFlight) await this.inFlight
      const lags = lagSum
      this.committing = true
      // The catch-up (records before the start's checkpoint) never moves the checkpoint back.
      const logs: Record<string, number> = {}
      for (const [file, to] of Object.entries(offsets)) {
        this.evaluatedTo.set(file, to)
        if (to > (this.o.book.checkpoint.logs[file] ?? 0)) logs[file] = to
      }
      this.late.evaluated(offsets, this.catchUpTo)
      const moved = Object.keys(logs).length > 0
      const update = {
        ...(moved ? { logs } : {}),
        ...(last ? { lastKey: last.key } : {}),
        records: count,
        behind: this.late.owed(),
      }
      const commit = this.o.book.commit(update).then(() => {
        this.committing = false
        const now = Date.now()
        for (const t of lags) this.o.metrics?.lag.observe(Math.max(0, (now - t) / 1000))
      })
      this.inFlight = commit
      commit.catch(() => {}) // observed by the next flush's await
      offsets = {}
      count = 0
      lagSum = []
      // A run's last commit is awaited unless another run is due: that one reads on meanwhile.
      if (final && (!this.again || this.closed)) await commit
    }
    // Records are read into a chunk, evaluated together (the batch rules' worker runs first, then
    // one pass in stored order), and committed; a chunk cut short by close() is evaluated again at
    // the next start. The merge is synchronous between reads of the log (stored-log.ts): no
    // promise per record. A chunk's evaluation (on the rule worker and the Python workers) goes on
    // while the previous chunk is passed and committed and the next one read; passes stay in
    // stored order (a rule's chunks queue in its worker in order, and late answers go first).
    let pending: StoredRecord[] = []
    let started: StartedChunk | null = null
    const budget = new TurnBudget()
    const finish = async () => {
      if (started === null) return
      const s = started
      started = null
      const evaluations = await s.evaluations
      // A rule's answers on this chunk come after its late ones: those are passed first.
      await this.late.settle(this.answeredOwing(s.live, evaluations[1]))
      this.late.passReady(this.o.book)
      await passChunk(s, evaluations, this.o.book, this.counted, budget)
      this.late.add(s.chunk, evaluations[1].late)
      // Records of a restart's catch-up were counted (and their key was the last) before the restart.
      const upTo = this.startFrom.size > 0 ? this.catchUpTo : null
      for (const rec of s.chunk) {
        offsets[rec.file] = rec.next
        if (upTo && rec.offset < (upTo[rec.file] ?? 0)) continue
        count++
        // every 8th record (the first 1,000 of each batch overstated the lag: they are its oldest)
        if ((count & 7) === 0) lagSum.push(Date.parse(rec.parseTime) || Date.now())
        last = rec
      }
    }
    const evaluate = async (final: boolean) => {
      if (pending.length === 0) return finish()
      const chunk = pending
      pending = []
      const rules = this.currentRules()
      if (!final) {
        const next = startChunk(chunk, rules, this.ruleWorker, this.terms(chunk))
        await finish()
        started = next
        return
      }
      await finish()
      started = startChunk(chunk, rules, this.ruleWorker, this.terms(chunk))
      await finish()
    }
    const merge = new StoredLogMerge(cursors)
    try {
      read: while (await merge.read()) {
        for (let rec = merge.next(); rec !== null; rec = merge.next()) {
          if (this.closed) break read
          pending.push(rec)
          if (pending.length >= batchMax) {
            await evaluate(false)
            if (count >= batchMax && (!this.committing || count >= 10 * batchMax)) await flush(false)
          }
        }
      }
    } finally {
      await merge.close()
    }
    if (this.closed) await finish()
    else {
      await evaluate(true)
      // Past the last complete line of each range (lines that were not records included).
      for (const [file, , to] of work) offsets[file] = to
    }
    await flush(true)
    if (this.pendingSince !== null && this.pendingSince <= startedAt) {
      const left = [...this.durable].some(([f, s]) => s > (this.o.book.checkpoint.logs[f] ?? 0))
      this.pendingSince = left ? Date.now() : null
    }
  }

  /**
   * The rules owing answers of earlier chunks that answered this one (not late in it): their late
   * answers must be passed first. A Python rule given no record of this chunk has none to order.
   */
  private answeredOwing(live: LiveIndex, evaluations: RecordEvaluations): string[] {
    if (!this.late.pending) return []
    const late = new Set(evaluations.late.map((l) => l.rule))
    const out = new Set<string>()
    for (const rules of live.byLogType.values())
      for (const rule of rules)
        if (this.late.owes(rule.meta.id) && !late.has(rule) && (!rule.batch || evaluations.ran?.has(rule)))
          out.add(rule.meta.id)
    return [...out]
  }

  /** How a chunk is evaluated: late rules allowed; during the catch-up, only the rules owing a record. */
  private terms(chunk: readonly StoredRecord[]) {
    const upTo = this.catchUpTo
    if (this.startFrom.size > 0 && !this.late.carrying) this.startFrom.clear()
    const catchUp = this.startFrom.size > 0 && chunk.some((r) => r.offset < (upTo[r.file] ?? 0))
    return {
      mayDefer: () => this.late.mayDefer(),
      owes: (rule: LiveRule) => this.late.owes(rule.meta.id),
      ...(catchUp
        ? {
            applies: (rule: LiveRule, i: number) => {
              const rec = chunk[i]!
              return rec.offset >= (upTo[rec.file] ?? 0) || this.late.owedAtStart(rule.meta.id, rec.file, rec.offset)
            },
          }
        : {}),
    }
  }

  /**
   * Whether everything announced so far gets evaluated and committed within `timeoutMs` (polled):
   * false when it does not, when detection stopped or closes, or once `cancelled()` says so.
   */
  async caughtUp(timeoutMs: number, cancelled: () => boolean = () => false): Promise<boolean> {
    const wanted = [...this.durable]
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const logs = this.o.book.checkpoint.logs
      if (wanted.every(([file, size]) => (logs[file] ?? 0) >= size)) return true
      if (this.closed || this.failure !== null || cancelled() || Date.now() >= deadline) return false
      await new Promise((r) => setTimeout(r, 20))
    }
  }

  async close(): Promise<void> {
    this.closed = true
    for (const w of this.answered.splice(0)) w()
    await this.idle()
    await this.ruleWorker?.close()
  }
}
