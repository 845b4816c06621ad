// A correlation rule's Schedule as its file gives it (RateMinutes or a CronExpression, and
// TimeoutMinutes), and what a run reports: the last run kept per rule, the answer of
// `POST /correlation-rules/{id}/run`, and a rule's part of /status (correlation-schedule.ts runs them).
import cron from 'node-cron'
import { isPlainObject } from '../is-plain-object.js'

export type Schedule =
  | { rateMinutes: number; timeoutMinutes: number }
  | { cronExpression: string; timeoutMinutes: number }

export interface LastRun {
  /** The evaluation time: the window is [evaluatedAt − LookbackWindowMinutes, evaluatedAt). */
  evaluatedAt: string
  durationMs: number
  outcome: 'ok' | 'error' | 'skipped'
  /** Join values that matched, signals counted for the first time, alerts created. */
  matches: number
  signalsCounted: number
  alertsCreated: number
}

/** What one run did (the answer of `POST /correlation-rules/{id}/run`). */
export interface CorrelationRunResult {
  ruleId: string
  /** The evaluation time; the window is [window.from, window.to) = [evaluatedAt − LookbackWindowMinutes, evaluatedAt). */
  evaluatedAt: string
  window: { from: string; to: string }
  outcome: 'ok' | 'error' | 'skipped'
  /** Join values that matched. */
  matches: number
  /** Signals counted for the first time. */
  signalsCounted: number
  /** Ids of the alerts this run created, and of those it added events to. */
  alertsCreated: string[]
  alertsUpdated: string[]
  durationMs: number
  /** The rule error of the run (also listed by GET /rule-errors); null when it ran. */
  error: string | null
}

export interface CorrelationRuleStatus {
  ruleId: string
  schedule: { rateMinutes: number } | { cronExpression: string }
  lastRun: LastRun | null
  nextRunAt: string | null
  lastError: { time: string; error: string } | null
  runs: number
  errors: number
}

/** The rule's Schedule (RateMinutes or CronExpression, TimeoutMinutes), or null when it has none valid. */
export function scheduleOf(data: Readonly<Record<string, unknown>>): Schedule | null {
  const block: unknown = Array.isArray(data.Detection) ? data.Detection[0] : undefined
  const s: unknown = isPlainObject(block) ? block.Schedule : undefined
  if (!isPlainObject(s)) return null
  const timeout = s.TimeoutMinutes
  if (typeof timeout !== 'number' || !Number.isSafeInteger(timeout) || timeout < 1) return null
  if (typeof s.RateMinutes === 'number' && Number.isSafeInteger(s.RateMinutes) && s.RateMinutes >= 1)
    return { rateMinutes: s.RateMinutes, timeoutMinutes: timeout }
  if (typeof s.CronExpression === 'string' && cron.validate(s.CronExpression.trim()))
    return { cronExpression: s.CronExpression.trim(), timeoutMinutes: timeout }
  return null
}
