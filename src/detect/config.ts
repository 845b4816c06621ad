// The `detection:` config section: the limits of `POST /replay` (how many run at once, how many
// stored bytes one may read) and the alert limit (alerts one rule may make in an hour). Checked by loadConfig with every other section (config/sections.ts
// lists it); `replayLimits` turns the raw section into trusted settings with the defaults.
import { type ConfigProblem, unknownKeys } from '../config/problems.js'
import { isPlainObject } from '../is-plain-object.js'
import { DEFAULT_ALERTS_PER_RULE_HOUR } from './alert-limiter.js'

export interface ReplayLimits {
  /** Replays running at once; one more is answered 503 with Retry-After. */
  concurrency: number
  /** Stored bytes (the data files of the hours [from, to) meets) one replay may read; more is a 400. */
  maxBytes: number
}

export const DEFAULT_REPLAY_LIMITS: ReplayLimits = { concurrency: 1, maxBytes: 8 * 1024 ** 3 }

const isPositiveInt = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1

/** Every problem of the `detection:` section (config/sections.ts runs it with the others). */
export function checkDetectionConfig(config: Record<string, unknown>): ConfigProblem[] {
  const d = config.detection
  if (d === undefined) return []
  if (!isPlainObject(d)) return [{ path: ['detection'], message: 'must be a map' }]
  const problems = unknownKeys(['detection'], d, ['replay', 'alertsPerRuleHour'])
  if (d.alertsPerRuleHour !== undefined && !isPositiveInt(d.alertsPerRuleHour))
    problems.push({ path: ['detection', 'alertsPerRuleHour'], message: 'must be a positive integer' })
  if (d.replay === undefined) return problems
  if (!isPlainObject(d.replay)) return [...problems, { path: ['detection', 'replay'], message: 'must be a map' }]
  problems.push(...unknownKeys(['detection', 'replay'], d.replay, Object.keys(DEFAULT_REPLAY_LIMITS)))
  for (const [k, v] of Object.entries(d.replay))
    if (k in DEFAULT_REPLAY_LIMITS && !isPositiveInt(v))
      problems.push({ path: ['detection', 'replay', k], message: 'must be a positive integer' })
  return problems
}

/** The replay limits of a checked configuration, defaults filled in. */
export function replayLimits(config: Record<string, unknown>): ReplayLimits {
  const d = config.detection
  const r = isPlainObject(d) && isPlainObject(d.replay) ? d.replay : {}
  return { ...DEFAULT_REPLAY_LIMITS, ...(r as Partial<ReplayLimits>) }
}

/** Alerts one rule may make in a clock hour (`detection.alertsPerRuleHour`; default 1,000). */
export function alertsPerRuleHour(config: Record<string, unknown>): number {
  const d = config.detection
  return isPlainObject(d) && typeof d.alertsPerRuleHour === 'number'
    ? d.alertsPerRuleHour
    : DEFAULT_ALERTS_PER_RULE_HOUR
}
