// Live detection: follows the stored log (durable batches announced by the log sources, and at
// start everything past the checkpoint), evaluates each record in stored order with every enabled
// rule of its log type at the revision served when its chunk is evaluated (Python rules batched
// per chunk: evaluate-records.ts), groups matches into alerts in stored order, and commits
// matches, groups, rule errors and the new checkpoint together (detection-store.ts).
// It runs beside ingest, never inside a request: ingest never waits for it.
import path from 'node:path'
import type { Logger } from '../log.js'
import type { RuleIndex } from '../rules/rule-index.js'
import { AlertIndex } from './alert-index.js'
import type { AlertHook } from './alert-hook.js'
import type { DetectMetrics } from './detect-metrics.js'
import type { DetectionStore, RuleErrorRecord } from './detection-store.js'
import { evaluateRecords, type RecordEvaluations } from './evaluate-records.js'
import { eventTimeMs } from './event-time.js'
import { type AlertStatus, type Group, Grouper, type MatchFields, matchId, type RuleMeta } from './grouping.js'
import { buildLiveIndex, type Evaluation, type LiveCompiler, type LiveIndex, type LiveRule } from './live-rules.js'
import { type OffloadedChunk, RuleWorker } from './rule-worker.js'
import { chunkFor, LineCursor, listDataFiles, StoredLogMerge, type StoredRecord } from './stored-log.js'

export interface DetectorOptions {
  dataDir: string
  logTypes: readonly string[]
  catalog: { readonly index: RuleIndex }
  compilers: Readonly<Record<string, LiveCompiler>>
  store: DetectionStore
  logger: Logger
  metrics?: DetectMetrics
  /** Records per commit (default 5,000). */
  batchRecords?: number
  /** Told of each new alert before and after its commit (destinations). */
  alertHook?: AlertHook
  /** Simple rules on a worker thread (rule-worker.ts; default true); false: all in-process. */
  ruleWorker?: boolean
}

/** A chunk whose evaluation is under way. */
interface Started {
  chunk: StoredRecord[]
  live: LiveIndex
  /** Rule errors of rules that do not compile, for a revision first used by this chunk. */
  broken: RuleErrorRecord[]
  evaluations: Promise<[OffloadedChunk | null, RecordEvaluations]>
}

export class Detector {
  readonly alerts = new AlertIndex()
  readonly grouper: Grouper
  readonly ruleErrors: RuleErrorRecord[]
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
  /** This batch's output, handed to the store only at its commit (so no other commit takes half). */
  private outMatches: Array<[string, Record<string, unknown>]> = []
  private outErrors: RuleErrorRecord[] = []
  private outCreated: Group[] = []
  /** Output made beside the stored-log run (commitExternal): its groups, and who waits for its commit. */
  private externalGroups = new Map<string, Group>()
  private externalWaiting: Array<{ done: () => void; fail: (e: unknown) => void }> = []
  /** Records and rule evaluations since the last commit: the metrics move once per commit. */
  private counted = { records: 0, evaluations: 0 }
  private patches: Array<{
    id: string
    status: AlertStatus
    done: (g: Group | undefined) => void
    fail: (e: unknown) => void
  }> = []

  constructor(private readonly o: DetectorOptions) {
    this.logsRoot = path.join(o.dataDir, 'logs')
    this.grouper = new Grouper(o.store.groups)
    for (const g of o.store.groups) if (g.alert) this.alerts.add(g)
    this.ruleErrors = o.store.errors
    this.ruleWorker =
      o.ruleWorker === false
        ? null
        : new RuleWorker((message) =>
            o.logger.warn({ message }, 'simple rules are evaluated in-process from now on (rule worker failed)'),
          )
  }

  /** Finds every log file past the checkpoint, then evaluates; call once the log sources are open. */
  async start(): Promise<void> {
    for (const lt of this.o.logTypes) {
      for (const file of await listDataFiles(this.logsRoot, lt)) {
        const { size } = await import('node:fs/promises').then((fs) => fs.stat(path.join(this.logsRoot, file)))
        this.announce([{ file, size }])
      }
    }
    this.kick()
  }

  /** A durable batch of the log sources (in commit order). */
  announce(files: ReadonlyArray<{ file: string; size: number }>): void {
    for (const { file, size } of files) {
      if (size > (this.durable.get(file) ?? 0)) this.durable.set(file, size)
      if (size > (this.o.store.checkpoint.logs[file] ?? 0)) this.pendingSince ??= Date.now()
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
    if (this.closed) return
    if (this.running) {
      this.again = true
      return
    }
    this.running = (async () => {
      try {
        do {
          this.again = false
          await this.runOnce()
        } while (this.again && !this.closed)
        await this.inFlight
        while (this.patches.length > 0 || this.externalWaiting.length > 0) await this.commitBatch(new Map(), {})
      } catch (err) {
        this.failure = err
        this.evaluatedTo.clear() // a later run starts from the checkpoint again, as a restart would
        this.o.logger.error({ err }, 'detection stopped: it resumes from its checkpoint at the next start')
      } finally {
        this.running = null
      }
    })()
  }

  /** Waits until everything announced so far is evaluated and committed (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running
  }

  status(): {
    checkpoint: { records: number; evaluatedAt: string | null; lastKey: string | null }
    lagSeconds: number
    failed: boolean
  } {
    const cp = this.o.store.checkpoint
    return {
      checkpoint: { records: cp.records, evaluatedAt: cp.evaluatedAt, lastKey: cp.lastKey },
      lagSeconds: this.pendingSince === null ? 0 : (Date.now() - this.pendingSince) / 1000,
      failed: this.failure !== null,
    }
  }

  /** The live rules, and the rule errors of rules that do not compile when the revision is new. */
  private currentRules(): { live: LiveIndex; broken: RuleErrorRecord[] } {
    const index = this.o.catalog.index
    const broken: RuleErrorRecord[] = []
    if (this.live === null || this.liveFrom !== index) {
      this.live = buildLiveIndex(index, this.o.compilers)
      this.liveFrom = index
      const time = new Date().toISOString()
      for (const b of this.live.broken)
        broken.push({ ruleId: b.meta.id, revision: b.meta.revision, time, record: null, error: b.error })
    }
    return { live: this.live, broken }
  }

  private addError(e: RuleErrorRecord): void {
    this.outErrors.push(e)
  }

  /** Hands this batch to the store (synchronously) and commits it with the log offsets reached. */
  private commitBatch(
    changed: Map<string, Group>,
    update: { logs?: Record<string, number>; lastKey?: string | null; records?: number },
  ): Promise<void> {
    const patches = this.patches
    this.patches = []
    const external = this.externalWaiting
    this.externalWaiting = []
    for (const g of this.externalGroups.values()) changed.set(g.id, g)
    this.externalGroups = new Map()
    const patched: Array<Group | undefined> = patches.map((p) => {
      const g = this.grouper.groups.get(p.id)
      if (!g?.alert) return undefined
      this.alerts.setStatus(g, p.status)
      g.status = p.status
      g.updatedAt = new Date().toISOString()
      changed.set(g.id, g)
      return g
    })
    for (const [t, m] of this.outMatches) this.o.store.addMatch(t, m)
    for (const e of this.outErrors) {
      this.o.store.addError(e)
      this.ruleErrors.push(e)
      this.o.metrics?.ruleErrors.inc({ rule: e.ruleId })
    }
    this.outMatches = []
    this.outErrors = []
    const created = this.outCreated
    this.outCreated = []
    for (const g of changed.values()) this.o.store.addGroup(g)
    const done = this.o.store.commit(update)
    done.then(
      () => {
        if (created.length > 0) this.o.alertHook?.committed(created)
        for (const [i, p] of patches.entries()) p.done(patched[i])
        for (const w of external) w.done()
      },
      (err: unknown) => {
        for (const p of patches) p.fail(err)
        for (const w of external) w.fail(err)
      },
    )
    return done
  }

  private async runOnce(): Promise<void> {
    const cp = this.o.store.checkpoint
    const work: Array<[string, number, number]> = []
    for (const [file, size] of this.durable) {
      const from = Math.max(cp.logs[file] ?? 0, this.evaluatedTo.get(file) ?? 0)
      if (size > from) work.push([file, from, size])
    }
    if (work.length === 0) {
      // The lag is zero once the previous run's last commit is durable (and nothing came meanwhile).
      await this.inFlight
      if (![...this.durable].some(([f, size]) => size > (this.o.store.checkpoint.logs[f] ?? 0)))
        this.pendingSince = null
      return
    }
    const startedAt = Date.now()
    const chunk = chunkFor(work.length)
    const cursors = work.map(([file, from, to]) => new LineCursor(this.logsRoot, file, from, to, chunk))
    const batchMax = this.o.batchRecords ?? 5000
    let offsets: Record<string, number> = {}
    let changed = new Map<string, Group>()
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
      for (const [file, to] of Object.entries(offsets)) this.evaluatedTo.set(file, to)
      const commit = this.commitBatch(changed, { logs: offsets, lastKey: last?.key ?? null, records: count }).then(
        () => {
          this.committing = false
          const now = Date.now()
          for (const t of lags) this.o.metrics?.lag.observe(Math.max(0, (now - t) / 1000))
        },
      )
      this.inFlight = commit
      commit.catch(() => {}) // observed by the next flush's await
      offsets = {}
      changed = new Map()
      count = 0
      lagSum = []
      // A run's last commit is awaited unless another run is due: that one reads on meanwhile.
      if (final && (!this.again || this.closed)) await commit
    }
    // Records are read into a chunk, evaluated together (the batch rules' worker runs first, then
    // one pass in stored order), and committed; a chunk cut short by close() is evaluated again at
    // the next start. The merge is synchronous between reads of the log (stored-log.ts): no
    // promise per record. Without batch rules, a chunk's evaluation (on the rule worker) goes on
    // while the next chunk is read; its pass in stored order comes before the next chunk's.
    let pending: StoredRecord[] = []
    let started: Started | null = null
    const finish = async () => {
      if (started === null) return
      const s = started
      started = null
      const evaluations = await s.evaluations
      this.finishChunk(s, evaluations, changed)
      for (const rec of s.chunk) {
        offsets[rec.file] = rec.next
        count++
        // every 8th record (the first 1,000 of each batch overstated the lag: they are its oldest)
        if ((count & 7) === 0) lagSum.push(Date.parse(rec.parseTime) || Date.now())
      }
      last = s.chunk[s.chunk.length - 1]!
    }
    const evaluate = async (final: boolean) => {
      if (pending.length === 0) return finish()
      const chunk = pending
      pending = []
      const rules = this.currentRules()
      if (!final && rules.live.batched.length === 0) {
        const next = this.startChunk(chunk, rules)
        await finish()
        started = next
        return
      }
      await finish()
      started = this.startChunk(chunk, rules)
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
      const left = [...this.durable].some(([f, s]) => s > (this.o.store.checkpoint.logs[f] ?? 0))
      this.pendingSince = left ? Date.now() : null
    }
  }

  /** Starts a chunk's evaluation with the rules served when it starts (a later revision applies to the next). */
  private startChunk(chunk: StoredRecord[], rules: { live: LiveIndex; broken: RuleErrorRecord[] }): Started {
    const { live } = rules
    const evaluations = Promise.all([
      this.ruleWorker?.evaluate(
        live,
        chunk.map((rec) => rec.line),
      ) ?? null,
      evaluateRecords(live, chunk),
    ])
    evaluations.catch(() => {}) // awaited by finishChunk's caller, unless the run stops first
    return { chunk, live, broken: rules.broken, evaluations }
  }

  /** A chunk's pass in stored order: rule errors, matches, grouping. */
  private finishChunk(
    s: Started,
    [offloaded, evaluations]: [OffloadedChunk | null, RecordEvaluations],
    changed: Map<string, Group>,
  ): void {
    for (const e of s.broken) this.addError(e)
    const time = new Date().toISOString()
    for (const { rule, error } of evaluations.failed)
      this.addError({ ruleId: rule.meta.id, revision: rule.meta.revision, time, record: null, error })
    const { chunk, live } = s
    for (let i = 0; i < chunk.length; i++) this.evaluate(chunk[i]!, i, live, evaluations, offloaded, changed)
  }

  private evaluate(
    rec: StoredRecord,
    i: number,
    live: LiveIndex,
    evaluations: RecordEvaluations,
    offloaded: OffloadedChunk | null,
    changed: Map<string, Group>,
  ): void {
    const logType = rec.logType
    const rules = live.byLogType.get(logType)
    this.counted.records++
    if (!rules) return
    const eventTime = rec.eventTime
    const now = Date.now()
    this.counted.evaluations += rules.length
    const covered = offloaded?.covered.get(logType)
    const hits = offloaded?.hits[i]
    if (covered?.all) {
      // Every rule of the log type ran on the worker: only its answers other than "no match".
      if (hits) for (const [slot, out] of hits) this.outcome(rec, rules[slot]!, out, logType, eventTime, now, changed)
      return
    }
    if (!rec.readable) return // a damaged line: never evaluated (the worker skips it too)
    let h = 0
    for (let slot = 0; slot < rules.length; slot++) {
      const rule = rules[slot]!
      let out: Evaluation
      if (covered?.slots[slot]) {
        if (hits === undefined || h >= hits.length || hits[h]![0] !== slot) continue
        out = hits[h++]![1]
      } else out = evaluations.of(rule, i, rec.record)
      this.outcome(rec, rule, out, logType, eventTime, now, changed)
    }
  }

  /** One rule's answer on one record: a rule error, nothing, or a match (grouped, output). */
  private outcome(
    rec: StoredRecord,
    rule: LiveRule,
    out: Evaluation,
    logType: string,
    eventTime: string,
    now: number,
    changed: Map<string, Group>,
  ): void {
    const meta = rule.meta
    if ('error' in out) {
      this.addError({
        ruleId: meta.id,
        revision: meta.revision,
        time: new Date(now).toISOString(),
        record: { partition: rec.file, offset: rec.offset },
        error: out.error,
      })
      return
    }
    if (!out.matched) return
    // Alert functions that raised: the match stands (Panther's fallbacks), each error is reported.
    for (const error of out.errors ?? [])
      this.addError({
        ruleId: meta.id,
        revision: meta.revision,
        time: new Date(now).toISOString(),
        record: { partition: rec.file, offset: rec.offset },
        error,
      })
    let alertId: string | null = null
    if (meta.createAlert) {
      const { group, created } = this.grouper.add(meta, out, eventTimeMs(eventTime), rec.record, now)
      alertId = group.id
      changed.set(group.id, group)
      if (created) {
        this.alerts.add(group)
        this.o.metrics?.alerts.inc()
        if (this.o.alertHook) {
          this.o.alertHook.created(group, meta, out)
          this.outCreated.push(group)
        }
      }
    }
    this.o.metrics?.matches.inc({ type: meta.createAlert ? 'match' : 'signal' })
    this.outMatches.push([
      eventTime,
      {
        id: matchId(meta.id, rec.file, rec.offset),
        ruleId: meta.id,
        ruleKind: meta.kind,
        revision: meta.revision,
        logType,
        eventTime,
        record: { partition: rec.file, offset: rec.offset },
        dedup: out.dedup,
        title: out.title,
        severity: out.severity,
        alertContext: out.alertContext,
        signal: !meta.createAlert,
        alertId,
      },
    ])
  }

  /**
   * Output made outside the stored-log run (correlation rules on their schedule): its new alerts
   * are indexed and told to the alert hook now, like a record's; its matches, groups and rule
   * errors are committed with the run's next batch, or alone at once. Resolves once durable.
   */
  commitExternal(out: {
    matches: Array<[string, Record<string, unknown>]>
    groups: readonly Group[]
    created: ReadonlyArray<{ group: Group; rule: RuleMeta; match: MatchFields }>
    errors: readonly RuleErrorRecord[]
  }): Promise<void> {
    if (this.closed) return Promise.reject(new Error('detection is closed'))
    for (const { group, rule, match } of out.created) {
      this.alerts.add(group)
      this.o.metrics?.alerts.inc()
      if (this.o.alertHook) {
        this.o.alertHook.created(group, rule, match)
        this.outCreated.push(group)
      }
    }
    this.outMatches.push(...out.matches)
    for (const e of out.errors) this.addError(e)
    for (const g of out.groups) this.externalGroups.set(g.id, g)
    return new Promise((done, fail) => {
      this.externalWaiting.push({ done, fail })
      if (!this.running) void this.commitBatch(new Map(), {}).catch(() => {})
    })
  }

  /**
   * Whether everything announced so far gets evaluated and committed within `timeoutMs` (polled):
   * false when it does not, when detection stopped or closes, or once `cancelled()` says so.
   */
  async caughtUp(timeoutMs: number, cancelled: () => boolean = () => false): Promise<boolean> {
    const wanted = [...this.durable]
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const logs = this.o.store.checkpoint.logs
      if (wanted.every(([file, size]) => (logs[file] ?? 0) >= size)) return true
      if (this.closed || this.failure !== null || cancelled() || Date.now() >= deadline) return false
      await new Promise((r) => setTimeout(r, 20))
    }
  }

  /** PATCH: the status is the only writable field; durable before the answer. */
  // A run in progress applies it at its next commit (never in the middle of a batch, whose groups
  // hold counts not yet committed); otherwise it is committed alone, at once.
  setStatus(id: string, status: AlertStatus): Promise<Group | undefined> {
    const g = this.grouper.groups.get(id)
    if (!g?.alert) return Promise.resolve(undefined)
    return new Promise((done, fail) => {
      this.patches.push({ id, status, done, fail })
      if (!this.running) void this.commitBatch(new Map(), {}).catch(() => {})
    })
  }

  async close(): Promise<void> {
    this.closed = true
    await this.idle()
    await this.ruleWorker?.close()
    await this.o.store.close()
  }
}
