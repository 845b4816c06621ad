// The `plans:` config section: how many days of stored events a plan's backtest replays when the
// request names none, the most it may name, and the pull-request checks (`checks`: the forge, its
// API, the repository there, the URL of the service whose console page a status links to; the token is RULEKEEPER_FORGE_TOKEN,
// never in the file). `planSettings` fills in the defaults.
import type { ForgeSettings } from './commit-status.js'
import { type ConfigProblem, unknownKeys } from '../config/problems.js'
import { isPlainObject } from '../is-plain-object.js'

export interface PlanSettings {
  backtestDays: number
  maxBacktestDays: number
  /** Pull-request checks; null: a pull-request event is acknowledged and not planned. */
  checks: (ForgeSettings & { linkUrl: string | null; forks: boolean }) | null
}

export const DEFAULT_PLAN_SETTINGS: PlanSettings = { backtestDays: 1, maxBacktestDays: 7, checks: null }

const FORGES = ['github', 'gitea', 'gitlab']
const httpUrl = (v: unknown) => typeof v === 'string' && /^https?:\/\/[^\s]+$/.test(v)

function checkChecks(c: unknown): ConfigProblem[] {
  if (c === null || c === undefined) return []
  if (!isPlainObject(c))
    return [{ path: ['plans', 'checks'], message: 'must be a map (forge, apiUrl, repository, linkUrl) or null' }]
  const at = (k: string) => ['plans', 'checks', k]
  const problems = unknownKeys(['plans', 'checks'], c, ['forge', 'apiUrl', 'repository', 'linkUrl', 'forks'])
  if (c.forks !== undefined && typeof c.forks !== 'boolean')
    problems.push({ path: at('forks'), message: 'must be true or false' })
  if (!FORGES.includes(c.forge as string))
    problems.push({ path: at('forge'), message: `must be one of ${FORGES.join(', ')}` })
  if (!httpUrl(c.apiUrl)) problems.push({ path: at('apiUrl'), message: 'must be the http(s) URL of the forge API' })
  if (typeof c.apiUrl === 'string' && /\/\/[^/]*@/.test(c.apiUrl))
    problems.push({ path: at('apiUrl'), message: 'must not hold credentials: the token is RULEKEEPER_FORGE_TOKEN' })
  if (typeof c.repository !== 'string' || c.repository.trim() === '')
    problems.push({
      path: at('repository'),
      message: 'must name the repository (owner/name, or a GitLab project id or path)',
    })
  else if (c.forge !== 'gitlab' && !/^[^/\s]+\/[^/\s]+$/.test(c.repository))
    problems.push({ path: at('repository'), message: 'must be owner/name' })
  if (c.linkUrl !== undefined && c.linkUrl !== null && !httpUrl(c.linkUrl))
    problems.push({
      path: at('linkUrl'),
      message: 'must be the http(s) URL the service (its console) is reached at, or null',
    })
  return problems
}

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
  problems.push(...checkChecks(p.checks))
  const s = planSettings(config)
  if (problems.length === 0 && s.backtestDays > s.maxBacktestDays)
    problems.push({ path: ['plans', 'backtestDays'], message: 'must not exceed maxBacktestDays' })
  return problems
}

export function planSettings(config: Record<string, unknown>): PlanSettings {
  const p = isPlainObject(config.plans) ? config.plans : {}
  const merged = { ...DEFAULT_PLAN_SETTINGS, ...(p as Partial<PlanSettings>) }
  const c = merged.checks
  return { ...merged, checks: c ? { ...c, linkUrl: c.linkUrl ?? null, forks: c.forks ?? false } : null }
}
