// When a scheduled query is due (docs/queries.md, "Scheduling"): its Schedule (RateMinutes, or a
// five-field CronExpression in UTC, and TimeoutMinutes) read from the file, and the slot a time
// falls in — RateMinutes slots are aligned to the epoch (every multiple of the period), so a slot
// has the same time before and after a restart; a CronExpression's slot is a minute it names.
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

/** Answers the slot a time falls in for one schedule, or null when a cron expression names no minute there. */
export class SlotClock {
  private readonly task: ScheduledTask | null
  /** The last cron answer of `nextSlot` (valid while it is still ahead). */
  private next: number | null = null

  constructor(
    readonly schedule: QuerySchedule,
    /** The length of one schedule minute of RateMinutes (tests shorten it); cron minutes are real. */
    private readonly minuteMs: number,
  ) {
    // A task never started: only its matcher is used (node-cron, UTC).
    this.task =
      'cronExpression' in schedule ? cron.createTask(schedule.cronExpression, () => {}, { timezone: 'UTC' }) : null
  }

  /** The slot at `nowMs`: the start of its RateMinutes period, or the current minute when the cron names it. */
  slotAt(nowMs: number): number | null {
    const s = this.schedule
    if ('rateMinutes' in s) {
      const period = s.rateMinutes * this.minuteMs
      return Math.floor(nowMs / period) * period
    }
    const minute = Math.floor(nowMs / 60_000) * 60_000
    return this.task!.match(new Date(minute)) ? minute : null
  }

  /** The next slot after `nowMs` (null: a cron expression naming no minute within a month). */
  nextSlot(nowMs: number): number | null {
    const s = this.schedule
    if ('rateMinutes' in s) {
      const period = s.rateMinutes * this.minuteMs
      return (Math.floor(nowMs / period) + 1) * period
    }
    if (this.next !== null && this.next > nowMs) return this.next
    let minute = Math.floor(nowMs / 60_000) * 60_000 + 60_000
    // A month ahead at most (44,640 minutes; /status asks, the answer is kept until it passes).
    const end = minute + 31 * 24 * 60 * 60_000
    for (; minute < end; minute += 60_000)
      if (this.task!.match(new Date(minute))) {
        this.next = minute
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
