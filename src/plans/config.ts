// The `plans:` config section: how many days of stored events a plan's backtest replays when the
// request names none, and the most it may name. `planSettings` fills in the defaults.
import { type ConfigProblem, unknownKeys } from '../config/problems.js'
import { isPlainObject } from '../is-plain-object.js'

export interface PlanSettings {
  backtestDays: number
  maxBacktestDays: number
}

export const DEFAULT_PLAN_SETTINGS: PlanSettings = { backtestDays: 1, maxBacktestDays: 7 }

const whole = (v: unknown, min: number) => typeof v === 'number' && Number.isSafeInteger(v) && v >= min

export function checkPlanConfig(config: Record<string, unknown>): ConfigProblem[] {
  const p = config.plans
  if (p === undefined) return []
  if (!isPlainObject(p)) return [{ path: ['plans'], message: 'must be a map' }]
  const problems = unknownKeys(['plans'], p, Object.keys(DEFAULT_PLAN_SETTINGS))
  if (p.backtestDays !== undefined && !whole(p.backtestDays, 0))
    problems.push({ path: ['plans', 'backtestDays'], message: 'must be a whole number, 0 or more' })
  if (p.maxBacktestDays !== undefined && !(whole(p.maxBacktestDays, 0) && (p.maxBacktestDays as number) <= 366))
    problems.push({ path: ['plans', 'maxBacktestDays'], message: 'must be a whole number from 0 to 366' })
  const s = planSettings(config)
  if (problems.length === 0 && s.backtestDays > s.maxBacktestDays)
    problems.push({ path: ['plans', 'backtestDays'], message: 'must not exceed maxBacktestDays' })
  return problems
}

export function planSettings(config: Record<string, unknown>): PlanSettings {
  const p = isPlainObject(config.plans) ? config.plans : {}
  return { ...DEFAULT_PLAN_SETTINGS, ...(p as Partial<PlanSettings>) }
}
