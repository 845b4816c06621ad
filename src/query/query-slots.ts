// When a scheduled query is due (docs/queries.md, "Scheduling"): its Schedule (RateMinutes, or a
// five-field CronExpression in UTC, and TimeoutMinutes) read from the file, and the slot a time
// falls in — RateMinutes slots are aligned to the epoch (every multiple of the period), so a slot
// has the same time before and after a restart; a CronExpression's slot is a minute it names. The
// slot at a time is the latest one started: it runs once, late if it must (a run still going).
import cron, { type ScheduledTask } from 'node-cron'
import { isPlainObject } from '../is-plain-object.js'

export type QuerySchedule =
  | { rateMinutes: number; timeoutMinutes: number }
  | { cronExpression: string; timeoutMinutes: number }

const positive = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1

/** The query file's Schedule, or null when it has none valid (the file is then never scheduled). */
export function queryScheduleOf(data: Readonly<Record<string, unknown>>): QuerySchedule | null {
  const s = data.Schedule
  if (!isPlainObject(s) || !positive(s.TimeoutMinutes)) return null
  const timeoutMinutes = s.TimeoutMinutes
  const hasRate = s.RateMinutes !== undefined
  const hasCron = s.CronExpression !== undefined
  if (hasRate === hasCron) return null
  if (hasRate) return positive(s.RateMinutes) ? { rateMinutes: s.RateMinutes, timeoutMinutes } : null
  const expr = typeof s.CronExpression === 'string' ? s.CronExpression.trim() : ''
  // Five fields only (node-cron would read a sixth as seconds).
  if (expr.split(/\s+/).length !== 5 || !cron.validate(expr)) return null
  return { cronExpression: expr, timeoutMinutes }
}

/** How far back a cron expression's latest minute is looked for (a slot older than a day is not caught up). */
const CRON_LOOKBACK_MS = 24 * 60 * 60_000
/** How far ahead its next minute is looked for. */
const CRON_LOOKAHEAD_MS = 31 * 24 * 60 * 60_000

/** Answers a schedule's slot at a time: the latest one started, which runs once, however late. */
export class SlotClock {
  private readonly task: ScheduledTask | null
  /** The last cron answer of `nextSlot`, asked at `from` (valid from then while it is still ahead). */
  private next: { slot: number; from: number } | null = null
  /** The last cron answer of `slotAt`: the latest minute from `from` (null: none), valid until `until`. */
  private latest: { slot: number | null; from: number; until: number } | null = null

  constructor(
    readonly schedule: QuerySchedule,
    /** The length of one schedule minute of RateMinutes (tests shorten it); cron minutes are real. */
    private readonly minuteMs: number,
  ) {
    // A task never started: only its matcher is used (node-cron, UTC).
    this.task =
      'cronExpression' in schedule ? cron.createTask(schedule.cronExpression, () => {}, { timezone: 'UTC' }) : null
  }

  private names(minute: number): boolean {
    return this.task!.match(new Date(minute))
  }

  /**
   * The slot at `nowMs`: the start of its RateMinutes period, or the latest minute the cron names (up
   * to a day back; null when none). A slot stays the answer until the next one starts, so a slot
   * that could not run in its own minute (a run of the same query still going) runs when it can.
   */
  slotAt(nowMs: number): number | null {
    const s = this.schedule
    if ('rateMinutes' in s) {
      const period = s.rateMinutes * this.minuteMs
      return Math.floor(nowMs / period) * period
    }
    const minute = Math.floor(nowMs / 60_000) * 60_000
    const l = this.latest
    if (l && minute >= l.from && minute < l.until) return l.slot
    let slot: number | null = null
    for (let m = minute; m > minute - CRON_LOOKBACK_MS; m -= 60_000)
      if (this.names(m)) {
        slot = m
        break
      }
    // None named within the look-ahead: none before its end either, so the answer holds until then.
    this.latest = { slot, from: minute, until: this.nextSlot(minute) ?? minute + CRON_LOOKAHEAD_MS }
    return slot
  }

  /** The next slot after `nowMs` (null: a cron expression naming no minute within a month). */
  nextSlot(nowMs: number): number | null {
    const s = this.schedule
    if ('rateMinutes' in s) {
      const period = s.rateMinutes * this.minuteMs
      return (Math.floor(nowMs / period) + 1) * period
    }
    if (this.next && this.next.from <= nowMs && nowMs < this.next.slot) return this.next.slot
    let minute = Math.floor(nowMs / 60_000) * 60_000 + 60_000
    // A month ahead at most (44,640 minutes; /status asks, the answer is kept until it passes).
    const end = minute + CRON_LOOKAHEAD_MS
    for (; minute < end; minute += 60_000)
      if (this.names(minute)) {
        this.next = { slot: minute, from: nowMs }
        return minute
      }
    return null
  }

  /** The schedule as /status shows it. */
  describe(): { rateMinutes: number } | { cronExpression: string } {
    const s = this.schedule
    return 'rateMinutes' in s ? { rateMinutes: s.rateMinutes } : { cronExpression: s.cronExpression }
  }

  close(): void {
    void this.task?.destroy()
  }
}
