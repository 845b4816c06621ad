// The `detection:` config section: the limits of `POST /replay` (how many run at once and wait, how
// many stored bytes one may read, how many alert groups and how much alert content one may hold) and
// the alert limit (alerts one rule may make in an hour), and how Python rules run (`python`: warm
// workers shared or one per rule, a rule's budget per batch, the quarantine after overruns). Checked by loadConfig with every other section (config-sections.ts
// lists it); `replayLimits` turns the raw section into trusted settings with the defaults.
import { type ConfigProblem, unknownKeys } from '../config/problems.js'
import { isPlainObject } from '../is-plain-object.js'
import { DEFAULT_ALERTS_PER_RULE_HOUR } from './alert-limiter.js'

export interface ReplayLimits {
  /** Replays running at once, in all (one per token); the next ones wait in the queue. */
  concurrency: number
  /** Replays waiting for a place, in all (one per token); one more is answered 503 with Retry-After. */
  queue: number
  /** Stored bytes (the data files of the hours [from, to) meets) one replay may read; more is a 400. */
  maxBytes: number
  /** Alert groups (alerts and windows still short of their threshold) one replay may hold; more is a 400. */
  maxGroups: number
  /** Alert content one replay may hold (each group's title, dedup and alert context as JSON); more is a 400. */
  maxContentBytes: number
}

export const DEFAULT_REPLAY_LIMITS: ReplayLimits = {
  concurrency: 2,
  queue: 8,
  maxBytes: 8 * 1024 ** 3,
  maxGroups: 20_000,
  maxContentBytes: 64 * 1024 ** 2,
}

const isPositiveInt = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1

/** `queue` may be 0 (nothing waits: a replay without a place is a 503 at once); the others are ≥ 1. */
const isLimit = (k: string, v: unknown) =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= (k === 'queue' ? 0 : 1)

/** Every problem of the `detection:` section (config-sections.ts runs it with the others). */
export function checkDetectionConfig(config: Record<string, unknown>): ConfigProblem[] {
  const d = config.detection
  if (d === undefined) return []
  if (!isPlainObject(d)) return [{ path: ['detection'], message: 'must be a map' }]
  const problems = unknownKeys(['detection'], d, ['replay', 'alertsPerRuleHour', 'python'])
  if (d.alertsPerRuleHour !== undefined && !isPositiveInt(d.alertsPerRuleHour))
    problems.push({ path: ['detection', 'alertsPerRuleHour'], message: 'must be a positive integer' })
  problems.push(...checkPythonDetection(d.python))
  if (d.replay === undefined) return problems
  if (!isPlainObject(d.replay)) return [...problems, { path: ['detection', 'replay'], message: 'must be a map' }]
  problems.push(...unknownKeys(['detection', 'replay'], d.replay, Object.keys(DEFAULT_REPLAY_LIMITS)))
  for (const [k, v] of Object.entries(d.replay))
    if (k in DEFAULT_REPLAY_LIMITS && !isLimit(k, v))
      problems.push({
        path: ['detection', 'replay', k],
        message: k === 'queue' ? 'must be a whole number, 0 or more' : 'must be a positive integer',
      })
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

/** `detection.python`: the Python rules' workers, budget and quarantine (engine/python/warm-detect.ts). */
export interface PythonDetection {
  isolation?: 'shared' | 'per-rule'
  budgetMs?: number
  budgetMsPerRecord?: number
  quarantineAfter?: number
  share?: PythonShare
}

/** `detection.python.share`: a rule's share of a shared worker (past it the rule is evicted, not struck). */
export interface PythonShare {
  /** The most one record may hold the worker (default 250). */
  recordMs?: number
  /** Per batch: this plus `batchPerRecordMs` × the rule's records (defaults 250 and 1). */
  batchBaseMs?: number
  batchPerRecordMs?: number
}

const PYTHON_KEYS = ['isolation', 'budgetMs', 'budgetMsPerRecord', 'quarantineAfter', 'share']
const SHARE_KEYS = ['recordMs', 'batchBaseMs', 'batchPerRecordMs']
const wholeMs = (v: unknown) => isPositiveInt(v) && (v as number) >= 10 && (v as number) <= 3_600_000

function checkShare(share: unknown): ConfigProblem[] {
  const path = ['detection', 'python', 'share']
  if (share === undefined) return []
  if (!isPlainObject(share)) return [{ path, message: 'must be a map' }]
  const problems = unknownKeys(path, share, SHARE_KEYS)
  for (const k of ['recordMs', 'batchBaseMs'] as const)
    if (share[k] !== undefined && !wholeMs(share[k]))
      problems.push({ path: [...path, k], message: 'must be a whole number of milliseconds from 10 to 3600000' })
  const per = share.batchPerRecordMs
  if (per !== undefined && !(typeof per === 'number' && Number.isFinite(per) && per >= 0 && per <= 60_000))
    problems.push({ path: [...path, 'batchPerRecordMs'], message: 'must be a number of milliseconds from 0 to 60000' })
  return problems
}

function checkPythonDetection(p: unknown): ConfigProblem[] {
  if (p === undefined) return []
  const at = (k: string) => ['detection', 'python', k]
  if (!isPlainObject(p)) return [{ path: ['detection', 'python'], message: 'must be a map' }]
  const problems = unknownKeys(['detection', 'python'], p, PYTHON_KEYS)
  if (p.isolation !== undefined && p.isolation !== 'shared' && p.isolation !== 'per-rule')
    problems.push({ path: at('isolation'), message: 'must be shared or per-rule' })
  if (p.budgetMs !== undefined && !(isPositiveInt(p.budgetMs) && (p.budgetMs as number) >= 10))
    problems.push({ path: at('budgetMs'), message: 'must be a whole number of milliseconds, 10 or more' })
  const per = p.budgetMsPerRecord
  if (per !== undefined && !(typeof per === 'number' && Number.isFinite(per) && per >= 0 && per <= 60_000))
    problems.push({ path: at('budgetMsPerRecord'), message: 'must be a number of milliseconds from 0 to 60000' })
  if (p.quarantineAfter !== undefined && !isPositiveInt(p.quarantineAfter))
    problems.push({ path: at('quarantineAfter'), message: 'must be a positive integer' })
  problems.push(...checkShare(p.share))
  return problems
}

/** The `detection.python` settings of a checked configuration (unset keys: the engine's defaults). */
export function pythonDetection(config: Record<string, unknown>): PythonDetection {
  const d = config.detection
  return isPlainObject(d) && isPlainObject(d.python) ? (d.python as PythonDetection) : {}
}
