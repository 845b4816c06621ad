// The `state:` config section: where the state beside the Git repository lives. Absent, or without
// `postgres`, it is the embedded default (files under the data directory); `state.postgres.url`
// names a PostgreSQL database shared by every replica; like every secret, its password stays out of
// the file (PGPASSWORD, as for any libpq client, or the whole URL in RULEKEEPER_POSTGRES_URL). `state.replica` names this process among them (default: the host name);
// the environment's RULEKEEPER_POSTGRES_URL and RULEKEEPER_REPLICA win over the file.
// `state.eventsDir` is the shared events directory: each replica stores the events it receives in
// its own folder there (`<eventsDir>/<replica>/`) and reads every replica's (ingest/events-layout.ts).
// `state.leaseTtlMs` is how long the schedules lease lasts unrenewed: how soon another replica runs
// the schedules after their holder dies (default 30 s; renewed at a third of it).
import os from 'node:os'
import path from 'node:path'
import { type ConfigProblem, unknownKeys } from '../config/problems.js'
import { isPlainObject } from '../is-plain-object.js'

type Env = Record<string, string | undefined>

export interface StateSettings {
  /** The shared store; null: the embedded file store. */
  postgres: { url: string } | null
  /** This replica's name (its checkpoint's key: each replica evaluates the log files it received). */
  replica: string
  /** The shared events directory (absolute); null: the events stay in the data directory's `logs/`. */
  eventsDir: string | null
  /** How long the schedules lease lasts unrenewed (ms). */
  leaseTtlMs: number
}

export const DEFAULT_LEASE_TTL_MS = 30_000

const URL = /^postgres(ql)?:\/\/\S*$/
const REPLICA = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/

/** A password in the URL's user part or its query (`?password=`): secrets stay out of config files. */
function holdsPassword(url: string): boolean {
  const at = url.indexOf('@', url.indexOf('//') + 2)
  const user = at < 0 ? '' : url.slice(url.indexOf('//') + 2, at)
  return user.includes(':') || /[?&]password=/i.test(url)
}

/** Every problem of the `state:` section (config-sections.ts runs it with the others). */
export function checkStateConfig(config: Record<string, unknown>): ConfigProblem[] {
  const s = config.state
  if (s === undefined) return []
  if (!isPlainObject(s)) return [{ path: ['state'], message: 'must be a map' }]
  const problems = unknownKeys(['state'], s, ['postgres', 'replica', 'eventsDir', 'leaseTtlMs'])
  if (
    s.leaseTtlMs !== undefined &&
    (!Number.isInteger(s.leaseTtlMs) || (s.leaseTtlMs as number) < 1_000 || (s.leaseTtlMs as number) > 600_000)
  )
    problems.push({ path: ['state', 'leaseTtlMs'], message: 'must be a whole number of milliseconds, 1000 to 600000' })
  if (
    s.eventsDir !== undefined &&
    s.eventsDir !== null &&
    (typeof s.eventsDir !== 'string' || s.eventsDir.trim() === '')
  )
    problems.push({ path: ['state', 'eventsDir'], message: 'must be a directory path (a shared filesystem)' })
  if (s.replica !== undefined && (typeof s.replica !== 'string' || !REPLICA.test(s.replica)))
    problems.push({
      path: ['state', 'replica'],
      message: 'must be 1 to 100 letters, digits, dots, dashes or underscores, starting with a letter or digit',
    })
  const p = s.postgres
  if (p === undefined || p === null) return problems
  if (!isPlainObject(p)) return [...problems, { path: ['state', 'postgres'], message: 'must be a map' }]
  problems.push(...unknownKeys(['state', 'postgres'], p, ['url']))
  if (typeof p.url !== 'string' || !URL.test(p.url))
    problems.push({ path: ['state', 'postgres', 'url'], message: 'must be a postgres:// or postgresql:// URL' })
  else if (holdsPassword(p.url))
    problems.push({
      path: ['state', 'postgres', 'url'],
      message: 'must not hold a password (put it in PGPASSWORD, or the whole URL in RULEKEEPER_POSTGRES_URL)',
    })
  return problems
}

/** The checked section with its defaults and the environment's values. */
export function stateSettings(config: Record<string, unknown>, env: Env = {}): StateSettings {
  const s = isPlainObject(config.state) ? config.state : {}
  const p = isPlainObject(s.postgres) ? s.postgres : null
  const url = env.RULEKEEPER_POSTGRES_URL || (typeof p?.url === 'string' ? p.url : null)
  const replica = env.RULEKEEPER_REPLICA || (typeof s.replica === 'string' ? s.replica : os.hostname())
  const eventsDir = typeof s.eventsDir === 'string' && s.eventsDir.trim() !== '' ? path.resolve(s.eventsDir) : null
  const leaseTtlMs = typeof s.leaseTtlMs === 'number' ? s.leaseTtlMs : DEFAULT_LEASE_TTL_MS
  return { postgres: url ? { url } : null, replica, eventsDir, leaseTtlMs }
}
