// The `destinations:` and `delivery:` sections of the service config (alerts.md §4), checked here
// (the config schema leaves sections to the modules that own them). Secrets never come from the
// file: a webhook's HMAC key and a Slack URL are read from the environment variables it names,
// once, at start; a variable named but unset stops the start with a message naming the variable.
import { type ConfigProblem, configInvalid, type KeyPath, unknownKeys } from '../config/problems.js'
import { isPlainObject } from '../is-plain-object.js'
import { SEVERITIES } from '../rules/severity.js'

export type DestinationType = 'webhook' | 'slack'

export interface Destination {
  id: string
  type: DestinationType
  /** Resolved: from `url`, or from the variable `urlEnv` names (never logged: a Slack URL is a secret). */
  url: string
  /** Where the URL came from, for messages: the URL itself when it is in the file, else the variable. */
  urlLabel: string
  severities: string[]
  /** The HMAC-SHA256 key of a webhook, from `secretEnv`; null: unsigned. */
  secret: string | null
  /** Requests in flight at once to this destination (default `delivery.concurrency`). */
  concurrency: number
  timeoutMs: number
}

export interface DeliveryPolicy {
  attempts: number
  firstDelayMs: number
  maxDelayMs: number
  budgetMinutes: number
  timeoutMs: number
  concurrency: number
}

export const DEFAULT_DELIVERY: DeliveryPolicy = {
  attempts: 10,
  firstDelayMs: 1000,
  maxDelayMs: 600_000,
  budgetMinutes: 60,
  timeoutMs: 10_000,
  concurrency: 4,
}

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
const ENV = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/

type Env = Record<string, string | undefined>

const LIMITS: Record<keyof DeliveryPolicy, [number, number]> = {
  attempts: [1, 1000],
  firstDelayMs: [1, 86_400_000],
  maxDelayMs: [1, 86_400_000],
  budgetMinutes: [1, 10_080],
  timeoutMs: [100, 600_000],
  concurrency: [1, 64],
}
const DESTINATION_KEYS = ['id', 'type', 'url', 'urlEnv', 'severities', 'secretEnv', 'concurrency', 'timeoutMs']

function int(v: unknown, where: KeyPath, [min, max]: [number, number], problems: ConfigProblem[]): number | undefined {
  if (v === undefined) return undefined
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    problems.push({ path: where, message: `must be an integer from ${min} to ${max}` })
    return undefined
  }
  return v
}

function httpUrl(text: string): boolean {
  try {
    const u = new URL(text)
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.username === '' && u.password === ''
  } catch {
    return false
  }
}

interface Read {
  destinations: Destination[]
  delivery: DeliveryPolicy
  problems: ConfigProblem[]
}

function readDelivery(d: unknown, problems: ConfigProblem[]): DeliveryPolicy {
  const delivery = { ...DEFAULT_DELIVERY }
  if (!isPlainObject(d)) {
    problems.push({ path: ['delivery'], message: 'must be a map' })
    return delivery
  }
  problems.push(...unknownKeys(['delivery'], d, Object.keys(DEFAULT_DELIVERY)))
  for (const [k, range] of Object.entries(LIMITS) as Array<[keyof DeliveryPolicy, [number, number]]>) {
    const v = int(d[k], ['delivery', k], range, problems)
    if (v !== undefined) delivery[k] = v
  }
  return delivery
}

/** One entry of `destinations:`; undefined when it is unusable (its problems are listed). */
function readDestination(
  raw: unknown,
  at: KeyPath,
  delivery: DeliveryPolicy,
  env: Env | undefined,
  problems: ConfigProblem[],
): Destination | undefined {
  if (!isPlainObject(raw)) {
    problems.push({ path: at, message: 'must be a map' })
    return undefined
  }
  const before = problems.length
  const bad = (key: string | null, message: string) => problems.push({ path: key ? [...at, key] : at, message })
  problems.push(...unknownKeys(at, raw, DESTINATION_KEYS))
  const id = raw.id
  if (typeof id !== 'string' || !ID.test(id)) bad('id', "must be 1-64 letters, digits, '.', '_' or '-'")
  const type = raw.type
  if (type !== 'webhook' && type !== 'slack') bad('type', 'must be webhook or slack')
  let url = ''
  let urlLabel = ''
  if ((raw.url === undefined) === (raw.urlEnv === undefined)) bad(null, 'needs exactly one of url and urlEnv')
  else if (raw.url !== undefined) {
    if (typeof raw.url !== 'string' || !httpUrl(raw.url))
      bad('url', 'must be an http(s) URL without credentials (put secrets in urlEnv)')
    else if (type === 'slack') bad('url', 'a Slack webhook URL is a secret: name its variable in urlEnv')
    else [url, urlLabel] = [raw.url, raw.url]
  } else if (typeof raw.urlEnv !== 'string' || !ENV.test(raw.urlEnv))
    bad('urlEnv', 'must be an environment variable name')
  else if (!env) urlLabel = `$${raw.urlEnv}`
  else {
    const v = env[raw.urlEnv]
    if (!v) bad('urlEnv', `the environment variable ${raw.urlEnv} is not set`)
    else if (!httpUrl(v)) bad('urlEnv', `the environment variable ${raw.urlEnv} is not an http(s) URL`)
    else [url, urlLabel] = [v, `$${raw.urlEnv}`]
  }
  const sev = raw.severities ?? []
  const severities: string[] = []
  if (!Array.isArray(sev)) bad('severities', 'must be a list')
  else
    for (const [j, s] of sev.entries()) {
      const up = typeof s === 'string' ? s.toUpperCase() : ''
      if (!(SEVERITIES as readonly string[]).includes(up))
        problems.push({
          path: [...at, 'severities', j],
          message: `${JSON.stringify(s)} is not one of ${SEVERITIES.join(', ')}`,
        })
      else severities.push(up)
    }
  let secret: string | null = null
  if (raw.secretEnv !== undefined) {
    if (type === 'slack') bad('secretEnv', 'Slack payloads are not signed')
    else if (typeof raw.secretEnv !== 'string' || !ENV.test(raw.secretEnv))
      bad('secretEnv', 'must be an environment variable name')
    else if (env && !env[raw.secretEnv]) bad('secretEnv', `the environment variable ${raw.secretEnv} is not set`)
    else if (env) secret = env[raw.secretEnv] as string
  }
  const concurrency = int(raw.concurrency, [...at, 'concurrency'], LIMITS.concurrency, problems) ?? delivery.concurrency
  const timeoutMs = int(raw.timeoutMs, [...at, 'timeoutMs'], LIMITS.timeoutMs, problems) ?? delivery.timeoutMs
  if (problems.length > before) return undefined
  return { id: id as string, type: type as DestinationType, url, urlLabel, severities, secret, concurrency, timeoutMs }
}

/** Both sections read; `env` undefined: the variables named are neither read nor required. */
function readSections(config: Record<string, unknown>, env: Env | undefined): Read {
  const problems: ConfigProblem[] = []
  const delivery = readDelivery(config.delivery ?? {}, problems)
  const list = config.destinations ?? []
  const destinations: Destination[] = []
  if (!Array.isArray(list)) problems.push({ path: ['destinations'], message: 'must be a list' })
  else {
    const seen = new Map<string, number>()
    for (const [i, raw] of list.entries()) {
      const id = isPlainObject(raw) ? raw.id : undefined
      if (typeof id === 'string' && seen.has(id))
        problems.push({
          path: ['destinations', i, 'id'],
          message: `${id} is used twice (also destinations[${seen.get(id)}])`,
        })
      else if (typeof id === 'string') seen.set(id, i)
      const d = readDestination(raw, ['destinations', i], delivery, env, problems)
      if (d) destinations.push(d)
    }
  }
  return { destinations, delivery, problems }
}

/**
 * Every problem of `destinations:` and `delivery:`. With `env`, a variable that a destination names
 * (urlEnv, secretEnv) and that is unset is one too (serve); without, only the file is checked.
 */
export function checkDestinationConfig(config: Record<string, unknown>, env?: Env): ConfigProblem[] {
  return readSections(config, env).problems
}

/** Reads both sections; every problem is listed at once (a ConfigInvalid error). */
export function parseDestinationConfig(
  config: Record<string, unknown>,
  env: Env,
  /** false: the variables named are not read nor required (`rulekeeper validate --config` needs only the ids). */
  opts: { resolveEnv?: boolean } = {},
): { destinations: Destination[]; delivery: DeliveryPolicy } {
  const { destinations, delivery, problems } = readSections(config, opts.resolveEnv === false ? undefined : env)
  if (problems.length > 0) throw configInvalid('invalid destinations configuration', problems)
  return { destinations, delivery }
}
