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
import { buildLiveIndex, type LiveCompiler, type LiveIndex } from './live-rules.js'
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
}

export class Detector {
  readonly alerts = new AlertIndex()
  readonly grouper: Grouper
  readonly ruleErrors: RuleErrorRecord[]
  private readonly logsRoot: string
  /** Durable length of each log file announced or found, beyond what is evaluated. */
  private readonly durable = new Map<string, number>()
  private live: LiveIndex | null = null
  private liveFrom: RuleIndex | null = null
  private running: Promise<void> | null = null
  private again = false
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
        while (this.patches.length > 0 || this.externalWaiting.length > 0) await this.commitBatch(new Map(), {})
      } catch (err) {
        this.failure = err
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

  private currentRules(): LiveIndex {
    const index = this.o.catalog.index
    if (this.live === null || this.liveFrom !== index) {
      this.live = buildLiveIndex(index, this.o.compilers)
      this.liveFrom = index
      const time = new Date().toISOString()
      for (const b of this.live.broken)
        this.addError({ ruleId: b.meta.id, revision: b.meta.revision, time, record: null, error: b.error })
    }
    return this.live
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
      const from = cp.logs[file] ?? 0
      if (size > from) work.push([file, from, size])
    }
    if (work.length === 0) {
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
    // takes its batch's output synchronously); the last one is awaited before the run ends. While
    // it is in flight the next batch keeps growing (up to 10 × batchRecords): when fsyncs are slow
    // (ingest shares the disk and the I/O threads) fewer, larger commits keep detection up to date.
    let inFlight: Promise<void> | null = null
    let committing = false
    const flush = async (final: boolean) => {
      this.o.metrics?.records.inc(this.counted.records)
      this.o.metrics?.evaluations.inc(this.counted.evaluations)
      this.counted = { records: 0, evaluations: 0 }
      if (inFlight) await inFlight
      const lags = lagSum
      committing = true
      inFlight = this.commitBatch(changed, { logs: offsets, lastKey: last?.key ?? null, records: count }).then(() => {
        committing = false
        const now = Date.now()
        for (const t of lags) this.o.metrics?.lag.observe(Math.max(0, (now - t) / 1000))
      })
      inFlight.catch(() => {}) // observed by the next flush's await
      offsets = {}
      changed = new Map()
      count = 0
      lagSum = []
      if (final) await inFlight
    }
    // Records are read into a chunk, evaluated together (the batch rules' worker runs first, then
    // one pass in stored order), and committed; a chunk cut short by close() is evaluated again at
    // the next start. The merge is synchronous between reads of the log (stored-log.ts): no
    // promise per record.
    let pending: StoredRecord[] = []
    const evaluate = async () => {
      if (pending.length === 0) return
      await this.evaluateChunk(pending, changed)
      for (const rec of pending) {
        offsets[rec.file] = rec.next
        count++
        // every 8th record (the first 1,000 of each batch overstated the lag: they are its oldest)
        if ((count & 7) === 0) lagSum.push(Date.parse(rec.parseTime) || Date.now())
      }
      last = pending[pending.length - 1]!
      pending = []
    }
    const merge = new StoredLogMerge(cursors)
    try {
      read: while (await merge.read()) {
        for (let rec = merge.next(); rec !== null; rec = merge.next()) {
          if (this.closed) break read
          pending.push(rec)
          if (pending.length >= batchMax) {
            await evaluate()
            if (count >= batchMax && (!committing || count >= 10 * batchMax)) await flush(false)
          }
        }
      }
    } finally {
      await merge.close()
    }
    if (!this.closed) {
      await evaluate()
      // Past the last complete line of each range (lines that were not records included).
      for (const [file, , to] of work) offsets[file] = to
    }
    await flush(true)
    if (this.pendingSince !== null && this.pendingSince <= startedAt) {
      const left = [...this.durable].some(([f, s]) => s > (this.o.store.checkpoint.logs[f] ?? 0))
      this.pendingSince = left ? Date.now() : null
    }
  }

  /** One chunk with the rules served when it starts (a revision served meanwhile applies to the next). */
  private async evaluateChunk(chunk: readonly StoredRecord[], changed: Map<string, Group>): Promise<void> {
    if (chunk.length === 0) return
    const live = this.currentRules()
    const evaluations = await evaluateRecords(
      live,
      chunk.map((rec) => rec.record),
    )
    const time = new Date().toISOString()
    for (const { rule, error } of evaluations.failed)
      this.addError({ ruleId: rule.meta.id, revision: rule.meta.revision, time, record: null, error })
    for (let i = 0; i < chunk.length; i++) this.evaluate(chunk[i]!, i, live, evaluations, changed)
  }

  private evaluate(
    rec: StoredRecord,
    i: number,
    live: LiveIndex,
    evaluations: RecordEvaluations,
    changed: Map<string, Group>,
  ): void {
    const logType = String(rec.record.p_log_type ?? '')
    const rules = live.byLogType.get(logType)
    this.counted.records++
    if (!rules) return
    const eventTime = String(rec.record.p_event_time ?? '')
    const eventMs = eventTimeMs(eventTime)
    const now = Date.now()
    this.counted.evaluations += rules.length
    for (const rule of rules) {
      const meta = rule.meta
      const out = evaluations.of(rule, i, rec.record)
      if ('error' in out) {
        this.addError({
          ruleId: meta.id,
          revision: meta.revision,
          time: new Date(now).toISOString(),
          record: { partition: rec.file, offset: rec.offset },
          error: out.error,
        })
        continue
      }
      if (!out.matched) continue
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
        const { group, created } = this.grouper.add(meta, out, eventMs, rec.record, now)
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
    await this.o.store.close()
  }
}
