// Correlation rules on their schedule (alerts.md §5): each enabled rule of the served revision whose
// kind runs on signals (its kind definition's `schedule`, rules/kinds/) runs when it first appears
// (at start, or when added, enabled or rescheduled) and then every RateMinutes, or per its
// CronExpression (node-cron, UTC). Runs go one at a time, beside
// ingest and detection, never inside a request. A run first waits until detection has evaluated
// every record announced before it (at most TimeoutMinutes; else the run is skipped with a rule
// error, docs/decisions.md), then evaluates (correlation-evaluate.ts) and commits its output through
// the alert book (alert-book.ts: alerts indexed, routed to destinations, durable with its matches).
// `runNow` puts one run in the same queue on demand and answers what it did (api/correlation-run-route.ts).
// With a shared SlotGuard (PostgreSQL, state/lease-slots.ts) runs follow slots instead (RateMinutes
// aligned to the epoch, or a cron minute: query/query-slots.ts), evaluated at their slot's time, only
// on the lease's holder, each recorded (fenced) before its output is committed: once per slot.
import { RunQueue } from '../run-queue.js'
import cron, { type ScheduledTask } from 'node-cron'
import {
  type CorrelationRuleStatus,
  type CorrelationRunResult,
  type LastRun,
  type Schedule,
  scheduleOf,
} from './correlation-schedule-of.js'
import type { Logger } from '../log.js'
import { runsOnSignals } from '../rules/kinds/index.js'
import type { RuleIndex } from '../rules/rule-index.js'
import type { CorrelationMetrics } from './correlation-metrics.js'
import { conflict, notFound, notLeading, RulekeeperError, unavailable } from '../errors.js'
import { type CorrelationOutput, correlate, planCorrelation, readWindowFor } from './correlation-evaluate.js'
import type { AlertBook } from './alert-book.js'
import type { MatchReader, RuleErrorRecord } from './detection-ledger.js'
import { SlotClock } from '../query/query-slots.js'
import type { SlotGuard } from '../state/slot-guard.js'

/** What a run needs of the log-reading loop (detector.ts): whether it stopped, and its progress. */
export interface LoopProgress {
  status(): { failed: boolean }
  /** Whether everything announced so far is evaluated and committed within `timeoutMs`. */
  caughtUp(timeoutMs: number, cancelled?: () => boolean): Promise<boolean>
}

export interface CorrelationScheduleOptions {
  catalog: { readonly index: RuleIndex }
  detector: LoopProgress
  /** Where a run groups its matches and commits its output (the alert book). */
  book: Pick<AlertBook, 'addEvents' | 'commitOutput' | 'refreshGroups'>
  store: MatchReader
  logsRoot: string
  logger: Logger
  metrics?: CorrelationMetrics
  /** The evaluation time of a run (tests set the clock); default: the real time. */
  now?: () => number
  /** The length of one schedule minute (RateMinutes, TimeoutMinutes) in ms; tests shorten it. Default 60,000. */
  minuteMs?: number
  /** How often the served revision is checked for added, changed or removed rules (ms, default 1,000). */
  syncMs?: number
  /** Shared slots (PostgreSQL): runs by slot on the lease's holder only; default: this process's timers. */
  slots?: SlotGuard
}

interface RuleState {
  ruleId: string
  schedule: Schedule
  key: string
  timer: NodeJS.Timeout | null
  task: ScheduledTask | null
  /** With shared slots: the rule's slots. */
  clock: SlotClock | null
  nextRunAt: number | null
  lastRun: LastRun | null
  lastError: { time: string; error: string } | null
  runs: number
  errors: number
}

const iso = (ms: number) => new Date(ms).toISOString()
const errorText = (err: unknown) => (err instanceof Error ? `${err.name}: ${err.message}` : String(err))

export class CorrelationScheduler {
  private readonly states = new Map<string, RuleState>()
  /** Runs one at a time (scheduled and manual). */
  private readonly queue = new RunQueue()
  private syncedIndex: RuleIndex | null = null
  private syncTimer: NodeJS.Timeout | null = null
  private closed = false
  private ticking = false
  private readonly now: () => number
  private readonly minuteMs: number

  constructor(private readonly o: CorrelationScheduleOptions) {
    this.now = o.now ?? Date.now
    this.minuteMs = o.minuteMs ?? 60_000
  }

  /** Schedules the served rules (each runs at once) and follows the served revision. */
  start(): void {
    this.sync()
    void this.runDue()
    this.syncTimer = setInterval(() => {
      this.sync()
      void this.runDue()
    }, this.o.syncMs ?? 1000)
    this.syncTimer.unref()
  }

  /** Brings the timers in line with the served revision: new or rescheduled rules run at once. */
  sync(): void {
    const index = this.o.catalog.index
    if (this.closed || index === this.syncedIndex) return
    this.syncedIndex = index
    const seen = new Set<string>()
    for (const rule of index.rules.values()) {
      if (!runsOnSignals(rule.kind) || rule.view.enabled === false) continue
      const schedule = scheduleOf(rule.file.data)
      if (schedule === null) continue
      seen.add(rule.id)
      const key = JSON.stringify(schedule)
      const old = this.states.get(rule.id)
      if (old?.key === key) continue
      if (old) this.disarm(old)
      const state: RuleState = {
        ruleId: rule.id,
        schedule,
        key,
        timer: null,
        task: null,
        clock: null,
        nextRunAt: null,
        lastRun: old?.lastRun ?? null,
        lastError: old?.lastError ?? null,
        runs: old?.runs ?? 0,
        errors: old?.errors ?? 0,
      }
      this.states.set(rule.id, state)
      this.arm(state)
      if (!this.o.slots) this.enqueue(rule.id)
    }
    for (const [id, state] of this.states)
      if (!seen.has(id)) {
        this.disarm(state)
        this.states.delete(id)
      }
  }

  private arm(state: RuleState): void {
    const s = state.schedule
    if (this.o.slots) {
      state.clock = new SlotClock(s, this.minuteMs)
      state.nextRunAt = state.clock.nextSlot(this.now())
      return
    }
    if ('rateMinutes' in s) {
      const period = s.rateMinutes * this.minuteMs
      let planned = Date.now() + period
      const tick = () => {
        planned += period
        // A run late by more than a period (a stalled host) waits for the next one, never piles up.
        while (planned <= Date.now()) planned += period
        state.nextRunAt = planned
        state.timer = setTimeout(tick, planned - Date.now())
        state.timer.unref()
        this.enqueue(state.ruleId)
      }
      state.nextRunAt = planned
      state.timer = setTimeout(tick, period)
      state.timer.unref()
    } else {
      state.task = cron.schedule(s.cronExpression, () => this.enqueue(state.ruleId), {
        timezone: 'UTC',
        noOverlap: true,
      })
      state.nextRunAt = state.task.getNextRun()?.getTime() ?? null
    }
  }

  private disarm(state: RuleState): void {
    if (state.timer) clearTimeout(state.timer)
    state.timer = null
    void state.task?.destroy()
    state.task = null
    state.clock?.close()
    state.clock = null
  }

  /** With shared slots: while leading, queues each rule whose current slot has not run (read again first). */
  private async runDue(): Promise<void> {
    const slots = this.o.slots
    if (!slots || this.closed || this.ticking || !slots.leading()) return
    this.ticking = true
    try {
      await slots.refresh?.()
      const now = this.now()
      for (const state of this.states.values()) {
        const slot = state.clock?.slotAt(now) ?? null
        if (state.clock) state.nextRunAt = state.clock.nextSlot(now)
        if (slot === null || this.queue.has(state.ruleId)) continue
        const last = slots.lastSlot(state.ruleId)
        if (last === undefined || slot > last) this.enqueue(state.ruleId, slot)
      }
    } catch (err) {
      this.o.logger.warn({ err }, 'cannot read the recorded slots of correlation rules')
    } finally {
      this.ticking = false
    }
  }

  /** Whether a slot's output may be committed: recorded, fenced (false: ran elsewhere, lease lost, or failed). */
  private async claim(ruleId: string, slot: number): Promise<boolean> {
    try {
      if (await this.o.slots!.commit(ruleId, slot)) return true
      this.o.logger.info(
        { ruleId, slot: iso(slot) },
        'a correlation slot ran elsewhere or the lease was lost; its output is dropped',
      )
    } catch (err) {
      this.o.logger.error({ err, ruleId }, 'cannot record a correlation slot; its output is dropped')
    }
    return false
  }

  /** Queues a run of the rule (once: a run already waiting covers it); resolves when the queue reaches it. */
  private enqueue(ruleId: string, slot?: number): Promise<void> {
    if (this.queue.waits(ruleId)) return this.queue.idle()
    const done = this.queue.add(ruleId, () => this.run(ruleId, false, slot))
    done.catch((err: unknown) => this.o.logger.error({ err, ruleId }, 'a correlation run failed'))
    return done.then(
      () => {},
      () => {},
    )
  }

  /** Runs every scheduled rule now (at the clock's time) and resolves when they are committed. */
  runAll(): Promise<void> {
    this.sync()
    let last = this.queue.idle()
    for (const id of [...this.states.keys()].sort()) last = this.enqueue(id)
    return last
  }

  /**
   * `POST /correlation-rules/{id}/run`: one run of an enabled served correlation rule now, at the
   * clock's time, in the queue of the scheduled runs; answers what it did. 404: no such rule; 409:
   * disabled, or a run of it in progress or due; 503: detection stopped or closing, or it has not
   * caught up within the rule's TimeoutMinutes (at most 30 s) — then nothing ran.
   */
  runNow(ruleId: string): Promise<CorrelationRunResult> {
    if (this.closed) throw unavailable('detection is shutting down')
    const rule = this.o.catalog.index.rules.get(ruleId)
    if (!rule || !runsOnSignals(rule.kind)) throw notFound(`correlation rule ${ruleId} not found`)
    if (rule.view.enabled === false)
      throw conflict(`correlation rule ${ruleId} is disabled: enable it to run it (its unit tests run without it)`)
    if (this.o.detector.status().failed)
      throw unavailable('detection has stopped (see the log; it resumes from its checkpoint at the next start)')
    // Shared slots: a run changes groups only the lease's holder keeps up to date.
    if (this.o.slots && !this.o.slots.leading()) throw notLeading()
    if (this.queue.has(ruleId))
      throw conflict(
        `a run of correlation rule ${ruleId} is already in progress or due; its outcome shows in GET /status (detection.correlation)`,
      )
    return this.queue.add(ruleId, async () => {
      const result = await this.run(ruleId, true)
      if (result === null)
        throw this.closed
          ? unavailable('detection is shutting down')
          : notFound(`correlation rule ${ruleId} not found (it changed meanwhile)`)
      return result
    })
  }

  /**
   * One run at the clock's time, or at its slot's (shared slots); null when the rule is not (any
   * more) an enabled served correlation rule, or the slot's run was refused.
   */
  private async run(ruleId: string, manual: boolean, slot?: number): Promise<CorrelationRunResult | null> {
    const state = this.states.get(ruleId)
    if (this.closed || (!state && !manual)) return null
    // Read the served rule now, synchronously (an index is a snapshot only until the next publish).
    const index = this.o.catalog.index
    const rule = index.rules.get(ruleId)
    if (!rule || !runsOnSignals(rule.kind) || rule.view.enabled === false) return null
    const at = slot ?? this.now()
    const started = Date.now()
    if (state?.task) state.nextRunAt = state.task.getNextRun()?.getTime() ?? null
    const plan = planCorrelation(rule, index)
    const lookbackMs = 'error' in plan ? 0 : plan.detection.lookbackMinutes * 60_000
    const result = (r: Omit<LastRun, 'evaluatedAt' | 'durationMs'>, error: string | null, out?: CorrelationOutput) => {
      const durationMs = Date.now() - started
      if (state) {
        state.runs++
        state.lastRun = { evaluatedAt: iso(at), durationMs, ...r }
      }
      this.o.metrics?.runs.inc({ outcome: r.outcome })
      const created = (out?.created ?? []).map((c) => c.group.id)
      const updated = new Set((out?.groups ?? []).filter((g) => g.alert).map((g) => g.id))
      for (const id of created) updated.delete(id)
      const run: CorrelationRunResult = {
        ruleId,
        evaluatedAt: iso(at),
        window: { from: iso(at - lookbackMs), to: iso(at) },
        outcome: r.outcome,
        matches: r.matches,
        signalsCounted: r.signalsCounted,
        alertsCreated: created,
        alertsUpdated: [...updated],
        durationMs,
        error,
      }
      return run
    }
    // A slot's run is recorded (fenced) once, before its first commit; refused: nothing committed.
    let claimed = slot === undefined
    const mayCommit = async () => (claimed ||= await this.claim(ruleId, slot!))
    const fail = async (outcome: 'error' | 'skipped', error: string) => {
      const record: RuleErrorRecord = { ruleId, revision: index.revision, time: iso(Date.now()), record: null, error }
      if (!(await mayCommit())) return null
      if (state) {
        state.errors++
        state.lastError = { time: record.time, error }
      }
      const run = result({ outcome, matches: 0, signalsCounted: 0, alertsCreated: 0 }, error)
      await this.o.book.commitOutput({ matches: [], groups: [], created: [], errors: [record] })
      return run
    }
    if ('error' in plan) return fail('error', plan.error)
    const timeoutMinutes = state?.schedule.timeoutMinutes ?? 1
    const timeoutMs = timeoutMinutes * this.minuteMs
    if (!(await this.o.detector.caughtUp(manual ? Math.min(timeoutMs, 30_000) : timeoutMs, () => this.closed))) {
      if (this.closed) return null
      if (manual)
        throw new RulekeeperError(
          'Unavailable',
          `detection has not evaluated the records accepted before ${iso(at)} yet; nothing ran: try again shortly`,
          {},
          { 'Retry-After': '5' },
        )
      return fail(
        'skipped',
        `detection had not evaluated the records accepted before ${iso(at)} within TimeoutMinutes (${timeoutMinutes}); this run was skipped (the next overlapping run sees them)`,
      )
    }
    let out: CorrelationOutput
    try {
      const window = await readWindowFor(this.o, plan, at)
      if (!(await mayCommit())) return null
      // Replicas: the groups as the last holder of the schedules lease committed them.
      await this.o.book.refreshGroups([ruleId], at - lookbackMs - plan.meta.dedupPeriodMinutes * 60_000)
      // From here to the commit nothing awaits: no other commit can take the groups half-changed.
      out = correlate(plan, window, at, this.o.book, Date.now())
    } catch (err) {
      return fail('error', errorText(err))
    }
    this.o.metrics?.signals.inc(out.counted)
    this.o.metrics?.alerts.inc(out.created.length)
    const commit = out.matches.length > 0 || out.groups.length > 0 ? this.o.book.commitOutput(out) : Promise.resolve()
    const counts = { matches: out.matched, signalsCounted: out.counted, alertsCreated: out.created.length }
    await commit
    return result({ outcome: 'ok', ...counts }, null, out)
  }

  status(): { rules: CorrelationRuleStatus[] } {
    const rules = [...this.states.values()]
      .sort((a, b) => (a.ruleId < b.ruleId ? -1 : 1))
      .map((s) => ({
        ruleId: s.ruleId,
        schedule:
          'rateMinutes' in s.schedule
            ? { rateMinutes: s.schedule.rateMinutes }
            : { cronExpression: s.schedule.cronExpression },
        lastRun: s.lastRun,
        nextRunAt: s.nextRunAt === null ? null : iso(s.nextRunAt),
        lastError: s.lastError,
        runs: s.runs,
        errors: s.errors,
      }))
    return { rules }
  }

  /** Stops the timers and waits for the run in progress (its output is committed or dropped whole). */
  async close(): Promise<void> {
    this.closed = true
    if (this.syncTimer) clearInterval(this.syncTimer)
    for (const state of this.states.values()) this.disarm(state)
    await this.queue.idle()
  }
}
