// Scheduled queries on their schedule (docs/queries.md, "Scheduling"): every enabled
// `scheduled_query` of the served revision with a valid Schedule that at least one enabled
// scheduled rule names runs once per slot (query-slots.ts: RateMinutes periods aligned to the
// epoch, or the minutes of a CronExpression, UTC), its macros relative to the slot time, under its
// TimeoutMinutes (the engine interrupts the query). Runs go one at a time, beside ingest and
// detection. Each row goes through the scheduled rules naming the query and their output is
// committed through the alert book (detect/scheduled-output.ts); a failed run is a rule error of
// each of those rules. Slots go through a SlotGuard: in the data directory, recorded durably before
// the run (slot-record.ts: a restart never runs a slot twice); over PostgreSQL, only the lease's
// holder runs them and each is recorded, fenced, before its output is committed (state/lease-slots.ts:
// a slot runs on one replica, once). `runNow` runs one query now (api/scheduled-query-run-route.ts).
import { RunQueue } from '../run-queue.js'
import type { AlertBook } from '../detect/alert-book.js'
import { evaluateRows, planScheduledRules, rulesNaming, scheduledOutput } from '../detect/scheduled-output.js'
import type { LiveCompiler } from '../engine/engine.js'
import { conflict, notFound, notLeading, unavailable } from '../errors.js'
import type { Logger } from '../log.js'
import type { RuleIndex } from '../rules/rule-index.js'
import type { ScheduledQueryMetrics } from './query-metrics.js'
import { type QuerySchedule, queryScheduleOf, SlotClock } from './query-slots.js'
import type { ScheduledQueries } from './scheduled-query.js'
import { SlotRecord } from './slot-record.js'
import type { SlotGuard } from '../state/slot-guard.js'

export interface QuerySchedulerOptions {
  catalog: { readonly index: RuleIndex }
  queries: Pick<ScheduledQueries, 'runScheduledQuery'> & Partial<Pick<ScheduledQueries, 'interrupt'>>
  /** The Python engine's `live` member: scheduled rules compile to its batch evaluator. */
  compile: LiveCompiler | undefined
  book: Pick<AlertBook, 'addEvents' | 'limiter' | 'commitOutput' | 'refreshGroups'>
  /** Where the durable record of the last slots is kept (without `slots`). */
  dataDir: string
  /** Who runs slots and where they are recorded; default: the record in `dataDir` (one process). */
  slots?: SlotGuard
  logger: Logger
  metrics?: ScheduledQueryMetrics
  /** The scheduler's clock (slots, macros); tests set it. Default: the real time. */
  now?: () => number
  /** The length of one schedule minute (RateMinutes, TimeoutMinutes) in ms; tests shorten it. Default 60,000. */
  minuteMs?: number
  /** How often due slots and the served revision are checked (ms, default 1,000). */
  tickMs?: number
}

/** What one run did (the answer of `POST /scheduled-queries/{name}/run`, and /status's last run). */
export interface ScheduledQueryRun {
  query: string
  trigger: 'schedule' | 'manual'
  /** The time the macros were relative to: the slot, or the time of a manual run. */
  slot: string
  startedAt: string
  rows: number
  /** Rows past the cap were not read (MAX_SCHEDULED_ROWS). */
  cut: boolean
  /** The enabled scheduled rules the rows went through. */
  rules: string[]
  /** Rows matched, over all rules. */
  matches: number
  alertsCreated: string[]
  alertsUpdated: string[]
  ruleErrors: number
  /** The query's part of the run (the rest: the rows through the rules, the commit). */
  queryMs: number
  durationMs: number
  outcome: 'ok' | 'error'
  error: string | null
}

interface QueryState {
  name: string
  schedule: QuerySchedule
  clock: SlotClock
  key: string
  lookback: { lookback: boolean | null; lookbackWindowSeconds: number | null }
  /** The last run, its alerts counted (not listed). */
  lastRun: (Omit<ScheduledQueryRun, 'alertsCreated' | 'alertsUpdated'> & { alertsCreated: number }) | null
  lastError: { time: string; error: string } | null
  runs: number
  errors: number
}

const iso = (ms: number) => new Date(ms).toISOString()
/** A run's output fields when it ended before making any (fresh arrays: a run's record keeps them). */
const noOutput = () => ({ matches: 0, alertsCreated: [] as string[], alertsUpdated: [] as string[] })

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err))

export class QueryScheduler {
  private readonly states = new Map<string, QueryState>()
  /** Runs one at a time (scheduled and manual). */
  private readonly queue = new RunQueue()
  private syncedIndex: RuleIndex | null = null
  private timer: NodeJS.Timeout | null = null
  private closed = false
  private readonly now: () => number
  private readonly minuteMs: number
  private readonly slots: SlotGuard
  private refreshing = false

  constructor(private readonly o: QuerySchedulerOptions) {
    this.now = o.now ?? Date.now
    this.minuteMs = o.minuteMs ?? 60_000
    this.slots = o.slots ?? new SlotRecord(o.dataDir, o.logger)
  }

  /** Schedules the served queries (a slot not yet run runs at once) and follows the served revision. */
  start(): void {
    this.tick()
    this.timer = setInterval(() => this.tick(), this.o.tickMs ?? 1000)
    this.timer.unref()
  }

  /**
   * Syncs with the served revision, then (while this process runs slots) queues each query whose
   * current slot has not run; a shared guard's record is read again first.
   */
  tick(): void {
    if (this.closed) return
    this.sync()
    if (!this.slots.leading()) return
    const refresh = this.slots.refresh
    if (!refresh) {
      this.queueDue()
      return
    }
    if (this.refreshing) return
    this.refreshing = true
    refresh
      .call(this.slots)
      .then(
        () => this.queueDue(),
        (err: unknown) => this.o.logger.warn({ err }, 'cannot read the recorded slots of scheduled queries'),
      )
      .finally(() => {
        this.refreshing = false
      })
  }

  private queueDue(): void {
    if (this.closed) return
    const now = this.now()
    for (const state of this.states.values()) {
      const slot = state.clock.slotAt(now)
      if (slot === null || this.queue.has(state.name)) continue
      const last = this.slots.lastSlot(state.name)
      if (last !== undefined && slot <= last) continue
      this.enqueue(state.name, slot)
    }
  }

  /** Whether a scheduled run's output may be committed (its slot recorded; false: refused or failed). */
  private async claim(name: string, slot: number): Promise<boolean> {
    try {
      if (await this.slots.commit(name, slot)) return true
      this.o.logger.info(
        { query: name, slot: iso(slot) },
        'a scheduled query slot ran elsewhere or the lease was lost; its output is dropped',
      )
    } catch (err) {
      this.o.logger.error({ err, query: name }, 'cannot record the slot of a scheduled query; its output is dropped')
    }
    return false
  }

  /** The scheduled queries of the served revision: enabled, a valid Schedule, named by an enabled scheduled rule. */
  private sync(): void {
    const index = this.o.catalog.index
    if (index === this.syncedIndex) return
    this.syncedIndex = index
    const seen = new Set<string>()
    for (const file of index.supports.values()) {
      if (file.analysisType !== 'scheduled_query' || file.data.Enabled === false) continue
      const name = file.data.QueryName
      const schedule = queryScheduleOf(file.data)
      if (typeof name !== 'string' || schedule === null || rulesNaming(index, name).length === 0) continue
      seen.add(name)
      const key = JSON.stringify(schedule)
      const lookback = {
        lookback: typeof file.data.Lookback === 'boolean' ? file.data.Lookback : null,
        lookbackWindowSeconds:
          typeof file.data.LookbackWindowSeconds === 'number' ? file.data.LookbackWindowSeconds : null,
      }
      const old = this.states.get(name)
      if (old?.key === key) {
        old.lookback = lookback
        continue
      }
      old?.clock.close()
      this.states.set(name, {
        name,
        schedule,
        clock: new SlotClock(schedule, this.minuteMs),
        key,
        lookback,
        lastRun: old?.lastRun ?? null,
        lastError: old?.lastError ?? null,
        runs: old?.runs ?? 0,
        errors: old?.errors ?? 0,
      })
    }
    for (const [name, state] of this.states)
      if (!seen.has(name)) {
        state.clock.close()
        this.states.delete(name)
      }
  }

  private enqueue(name: string, slot: number): void {
    this.queue
      .add(name, () => this.run(name, slot, 'schedule'))
      .catch((err: unknown) => this.o.logger.error({ err, query: name }, 'a scheduled query run failed'))
  }

  /** Resolves when every run queued so far has finished (tests). */
  idle(): Promise<void> {
    return this.queue.idle()
  }

  /**
   * `POST /scheduled-queries/{name}/run`: one run of the query now (macros relative to the clock's
   * time), in the queue of the scheduled runs; answers what it did. It records no slot: the
   * scheduled runs keep theirs. 404: no scheduled or saved query is named so; 409: disabled, named
   * by no enabled scheduled rule, or a run of it in progress or due; 503: shutting down.
   */
  runNow(name: string): Promise<ScheduledQueryRun> {
    if (this.closed) throw unavailable('scheduled queries are shutting down')
    const index = this.o.catalog.index
    const file = index.supports.get(name)
    if (!file || (file.analysisType !== 'scheduled_query' && file.analysisType !== 'saved_query'))
      throw notFound(`no scheduled or saved query is named ${name}`)
    if (file.data.Enabled === false) throw conflict(`the query ${name} is disabled: enable it to run it`)
    if (rulesNaming(index, name).length === 0)
      throw conflict(`no enabled scheduled rule names the query ${name}: its rows would go nowhere`)
    // Shared slots: a run changes groups only the lease's holder keeps up to date.
    if (this.o.slots && !this.o.slots.leading()) throw notLeading()
    if (this.queue.has(name))
      throw conflict(
        `a run of the query ${name} is already in progress or due; its outcome shows in GET /status (scheduledQueries)`,
      )
    return this.queue.add(name, async () => {
      const run = await this.run(name, this.now(), 'manual')
      if (run === null)
        throw this.closed
          ? unavailable('scheduled queries are shutting down')
          : notFound(`the query ${name} is no longer served (it changed meanwhile)`)
      return run
    })
  }

  /** One run at `atMs`; null when the query is no longer one to run (changed meanwhile) or closing. */
  private async run(name: string, atMs: number, trigger: 'schedule' | 'manual'): Promise<ScheduledQueryRun | null> {
    if (this.closed) return null
    const state = this.states.get(name)
    if (trigger === 'schedule' && !state) return null
    // The served index now, synchronously (a snapshot only until the next publish).
    const index = this.o.catalog.index
    const file = index.supports.get(name)
    if (!file || file.data.Enabled === false) return null
    const plans = planScheduledRules(index, name, this.o.compile)
    if (plans.length === 0) return null
    const schedule = queryScheduleOf(file.data)
    const timeoutMs = schedule ? schedule.timeoutMinutes * this.minuteMs : undefined
    const startedAt = Date.now()
    // Kept for every query of the served revision (a query unscheduled and scheduled again in the
    // same slot does not run it twice); only deleted queries' records go.
    if (trigger === 'schedule' && !(await this.slots.begin(name, atMs, new Set(index.supports.keys())))) return null
    const base = {
      query: name,
      trigger,
      slot: iso(atMs),
      startedAt: iso(startedAt),
      rules: plans.map((p) => p.meta.id),
    }
    const finish = async (
      r: Pick<
        ScheduledQueryRun,
        'rows' | 'cut' | 'matches' | 'alertsCreated' | 'alertsUpdated' | 'ruleErrors' | 'queryMs'
      >,
      error: string | null,
    ): Promise<ScheduledQueryRun> => {
      const durationMs = Date.now() - startedAt
      const run: ScheduledQueryRun = { ...base, ...r, durationMs, outcome: error === null ? 'ok' : 'error', error }
      this.o.metrics?.runs.inc({ outcome: run.outcome })
      this.o.metrics?.duration.observe(durationMs / 1000)
      this.o.metrics?.rows.inc(r.rows)
      this.o.metrics?.alerts.inc(r.alertsCreated.length)
      const live = this.states.get(name)
      if (live) {
        live.runs++
        const { alertsCreated, alertsUpdated: _updated, ...counts } = run
        live.lastRun = { ...counts, alertsCreated: alertsCreated.length }
        if (error !== null) {
          live.errors++
          live.lastError = { time: iso(Date.now()), error }
        }
      }
      return run
    }
    let rows: Array<Record<string, unknown>>
    let cut: boolean
    try {
      ;({ rows, cut } = await this.o.queries.runScheduledQuery(name, atMs, timeoutMs))
    } catch (err) {
      const error = `the scheduled query ${name} failed: ${errorText(err)}`
      const time = iso(Date.now())
      const errors = plans.map((p) => ({ ruleId: p.meta.id, revision: p.meta.revision, time, record: null, error }))
      if (trigger === 'schedule' && !(await this.claim(name, atMs))) return null
      await this.o.book.commitOutput({ matches: [], groups: [], created: [], errors }).catch((e: unknown) => {
        this.o.logger.error({ err: e, query: name }, 'cannot commit the rule errors of a failed scheduled query')
      })
      return finish(
        { ...noOutput(), rows: 0, cut: false, queryMs: Date.now() - startedAt, ruleErrors: errors.length },
        error,
      )
    }
    const queryMs = Date.now() - startedAt
    // Closing waits for this run (close() awaits the queue), so its output is still committed.
    const evaluations = await evaluateRows(plans, rows)
    if (trigger === 'schedule' && !(await this.claim(name, atMs))) return null
    // Replicas: the groups as the last holder of the schedules lease committed them.
    const longest = Math.max(...plans.map((p) => p.meta.dedupPeriodMinutes))
    try {
      await this.o.book.refreshGroups(
        plans.map((p) => p.meta.id),
        atMs - longest * 60_000,
      )
    } catch (err) {
      // The slot is recorded: the run ends here as an error of the run (status, metrics), not a lost slot.
      const error = `the alert groups of the scheduled query ${name}'s rules could not be read: ${errorText(err)}`
      return finish({ ...noOutput(), rows: rows.length, cut, queryMs, ruleErrors: 0 }, error)
    }
    // From here to the commit nothing awaits: no other commit can take the groups half-changed.
    const out = scheduledOutput({
      query: name,
      atMs,
      runKey: `${trigger}:${iso(atMs)}:${startedAt}`,
      rows,
      plans,
      evaluations,
      book: this.o.book,
      nowMs: Date.now(),
    })
    const counts = { rows: rows.length, cut, matches: out.matched, ruleErrors: out.errors.length, queryMs }
    try {
      if (out.matches.length > 0 || out.errors.length > 0 || out.groups.length > 0) await this.o.book.commitOutput(out)
    } catch (err) {
      // Detection stopped or closing (alert-book.ts): nothing of this run is durable.
      const error = `the output of the scheduled query ${name} could not be committed: ${errorText(err)}`
      return finish({ ...counts, alertsCreated: [], alertsUpdated: [] }, error)
    }
    return finish({ ...counts, alertsCreated: out.alertsCreated, alertsUpdated: out.alertsUpdated }, null)
  }

  /** The scheduled queries as /status shows them (`scheduledQueries`). */
  status(): { queries: unknown[] } {
    const now = this.now()
    const queries = [...this.states.values()]
      .sort((a, b) => (a.name < b.name ? -1 : 1))
      .map((s) => {
        const last = this.slots.lastSlot(s.name)
        const next = s.clock.nextSlot(now)
        return {
          name: s.name,
          schedule: { ...s.clock.describe(), timeoutMinutes: s.schedule.timeoutMinutes },
          ...s.lookback,
          lastSlot: last === undefined ? null : iso(last),
          nextSlotAt: next === null ? null : iso(next),
          lastRun: s.lastRun,
          lastError: s.lastError,
          runs: s.runs,
          errors: s.errors,
        }
      })
    return { queries }
  }

  /**
   * Stops the timer, interrupts the query in progress (a run of a long TimeoutMinutes does not hold
   * shutdown up: that run ends in error, its slot recorded) and waits for the run to end.
   */
  async close(): Promise<void> {
    this.closed = true
    if (this.timer) clearInterval(this.timer)
    for (const s of this.states.values()) s.clock.close()
    this.o.queries.interrupt?.()
    await this.queue.idle()
  }
}
