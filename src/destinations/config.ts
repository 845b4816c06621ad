// The `destinations:` and `delivery:` sections of the service config (alerts.md §4), checked here
// (the config schema leaves sections to the modules that own them). Secrets never come from the
// file: a webhook's HMAC key and a Slack URL are read from the environment variables it names,
// once, at start; a variable named but unset stops the start with a message naming the variable.
import { RulekeeperError } from '../errors.js'
import { isPlainObject } from '../is-plain-object.js'
import { SEVERITIES } from '../rules/model.js'

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

function int(v: unknown, where: string, min: number, max: number, problems: string[]): number | undefined {
  if (v === undefined) return undefined
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    problems.push(`${where} must be an integer from ${min} to ${max}`)
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

/** Reads both sections; every problem is listed at once (a ConfigInvalid error). */
export function parseDestinationConfig(
  config: Record<string, unknown>,
  env: Record<string, string | undefined>,
  /** false: the variables named are not read nor required (`rulekeeper validate --config` needs only the ids). */
  opts: { resolveEnv?: boolean } = {},
): { destinations: Destination[]; delivery: DeliveryPolicy } {
  const resolveEnv = opts.resolveEnv !== false
  const problems: string[] = []
  const d = config.delivery ?? {}
  const delivery = { ...DEFAULT_DELIVERY }
  if (!isPlainObject(d)) problems.push('delivery must be a map')
  else {
    for (const k of Object.keys(d)) if (!(k in DEFAULT_DELIVERY)) problems.push(`delivery.${k} is not a known setting`)
    const limits: Record<keyof DeliveryPolicy, [number, number]> = {
      attempts: [1, 1000],
      firstDelayMs: [1, 86_400_000],
      maxDelayMs: [1, 86_400_000],
      budgetMinutes: [1, 10_080],
      timeoutMs: [100, 600_000],
      concurrency: [1, 64],
    }
    for (const [k, [min, max]] of Object.entries(limits) as Array<[keyof DeliveryPolicy, [number, number]]>) {
      const v = int(d[k], `delivery.${k}`, min, max, problems)
      if (v !== undefined) delivery[k] = v
    }
  }
  const list = config.destinations ?? []
  const destinations: Destination[] = []
  if (!Array.isArray(list)) problems.push('destinations must be a list')
  else {
    const seen = new Set<string>()
    for (const [i, raw] of list.entries()) {
      const at = `destinations[${i}]`
      if (!isPlainObject(raw)) {
        problems.push(`${at} must be a map`)
        continue
      }
      const known = ['id', 'type', 'url', 'urlEnv', 'severities', 'secretEnv', 'concurrency', 'timeoutMs']
      for (const k of Object.keys(raw)) if (!known.includes(k)) problems.push(`${at}.${k} is not a known setting`)
      const id = raw.id
      if (typeof id !== 'string' || !ID.test(id)) {
        problems.push(`${at}.id must be 1-64 letters, digits, '.', '_' or '-'`)
        continue
      }
      if (seen.has(id)) problems.push(`${at}.id ${id} is used twice`)
      seen.add(id)
      const type = raw.type
      if (type !== 'webhook' && type !== 'slack') problems.push(`${at}.type must be webhook or slack`)
      let url = ''
      let urlLabel = ''
      if ((raw.url === undefined) === (raw.urlEnv === undefined))
        problems.push(`${at} needs exactly one of url and urlEnv`)
      else if (raw.url !== undefined) {
        if (typeof raw.url !== 'string' || !httpUrl(raw.url))
          problems.push(`${at}.url must be an http(s) URL without credentials (put secrets in urlEnv)`)
        else if (type === 'slack') problems.push(`${at}: a Slack webhook URL is a secret: name its variable in urlEnv`)
        else [url, urlLabel] = [raw.url, raw.url]
      } else if (typeof raw.urlEnv !== 'string' || !ENV.test(raw.urlEnv))
        problems.push(`${at}.urlEnv must be an environment variable name`)
      else if (!resolveEnv) urlLabel = `$${raw.urlEnv}`
      else {
        const v = env[raw.urlEnv]
        if (!v) problems.push(`${at}: the environment variable ${raw.urlEnv} (urlEnv) is not set`)
        else if (!httpUrl(v)) problems.push(`${at}: ${raw.urlEnv} (urlEnv) is not an http(s) URL`)
        else [url, urlLabel] = [v, `$${raw.urlEnv}`]
      }
      const sev = raw.severities ?? []
      const severities: string[] = []
      if (!Array.isArray(sev)) problems.push(`${at}.severities must be a list`)
      else
        for (const s of sev) {
          const up = typeof s === 'string' ? s.toUpperCase() : ''
          if (!(SEVERITIES as readonly string[]).includes(up))
            problems.push(`${at}.severities: ${JSON.stringify(s)} is not one of ${SEVERITIES.join(', ')}`)
          else severities.push(up)
        }
      let secret: string | null = null
      if (raw.secretEnv !== undefined) {
        if (type === 'slack') problems.push(`${at}.secretEnv: Slack payloads are not signed`)
        else if (typeof raw.secretEnv !== 'string' || !ENV.test(raw.secretEnv))
          problems.push(`${at}.secretEnv must be an environment variable name`)
        else if (!resolveEnv) secret = null
        else if (!env[raw.secretEnv])
          problems.push(`${at}: the environment variable ${raw.secretEnv} (secretEnv) is not set`)
        else secret = env[raw.secretEnv] as string
      }
      const concurrency = int(raw.concurrency, `${at}.concurrency`, 1, 64, problems) ?? delivery.concurrency
      const timeoutMs = int(raw.timeoutMs, `${at}.timeoutMs`, 100, 600_000, problems) ?? delivery.timeoutMs
      destinations.push({
        id,
        type: type as DestinationType,
        url,
        urlLabel,
        severities,
        secret,
        concurrency,
        timeoutMs,
      })
    }
  }
  if (problems.length > 0)
    throw new RulekeeperError('ConfigInvalid', `invalid destinations configuration:\n${problems.join('\n')}`)
  return { destinations, delivery }
}
