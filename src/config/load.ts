// Loads the configuration: config/default.yaml, then the file named by RULEKEEPER_CONFIG layered
// over it, then the RULEKEEPER_* environment variables. Takes the environment as an argument (the
// CLI's entry, cli/index.ts, passes process.env; main.ts and tests pass what they were given) and
// fails fast listing every problem at once.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Ajv } from 'ajv'
import YAML from 'yaml'
import { RulekeeperError } from '../errors.js'
import { configSchema, type Config } from './schema.js'
import { isPlainObject } from '../is-plain-object.js'

export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const DEFAULT_CONFIG_PATH = path.join(PACKAGE_ROOT, 'config', 'default.yaml')

type Env = Record<string, string | undefined>

/** Maps merge key by key; arrays and scalars replace. */
function layer(base: unknown, over: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(over)) return over === undefined ? base : over
  const out: Record<string, unknown> = { ...base }
  for (const [k, v] of Object.entries(over)) out[k] = layer(base[k], v)
  return out
}

function readYamlFile(file: string): unknown {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new RulekeeperError('ConfigInvalid', `cannot read config file ${file}: ${(err as Error).message}`)
  }
  const doc = YAML.parseDocument(text, { version: '1.2', schema: 'core' })
  if (doc.errors.length > 0) {
    const msgs = doc.errors.map(
      (e) => `${file}:${e.linePos?.[0].line ?? '?'}:${e.linePos?.[0].col ?? '?'} ${e.message.split('\n')[0]}`,
    )
    throw new RulekeeperError('ConfigInvalid', `invalid YAML in config:\n${msgs.join('\n')}`)
  }
  return doc.toJS({ maxAliasCount: 100 }) ?? {}
}

function envOverrides(env: Env): Record<string, unknown> {
  const o: Record<string, unknown> = {}
  const set = (keys: string[], value: unknown) => {
    let cur = o
    for (const k of keys.slice(0, -1)) cur = (cur[k] ??= {}) as Record<string, unknown>
    cur[keys[keys.length - 1]!] = value
  }
  if (env.RULEKEEPER_DATA_DIR) set(['dataDir'], env.RULEKEEPER_DATA_DIR)
  if (env.RULEKEEPER_HOST) set(['server', 'host'], env.RULEKEEPER_HOST)
  if (env.RULEKEEPER_PORT !== undefined && env.RULEKEEPER_PORT !== '') {
    const n = Number(env.RULEKEEPER_PORT)
    set(['server', 'port'], Number.isInteger(n) ? n : env.RULEKEEPER_PORT)
  }
  if (env.RULEKEEPER_BACKEND) set(['backend', 'kind'], env.RULEKEEPER_BACKEND)
  if (env.RULEKEEPER_GIT_URL) set(['git', 'remote', 'url'], env.RULEKEEPER_GIT_URL)
  if (env.RULEKEEPER_GIT_BRANCH) set(['git', 'branch'], env.RULEKEEPER_GIT_BRANCH)
  if (env.RULEKEEPER_LOG_LEVEL) set(['log', 'level'], env.RULEKEEPER_LOG_LEVEL)
  return o
}

const extraValidators: Array<(config: Record<string, unknown>) => string[]> = []

/** Lets a module that owns a config section check it in the same pass (all problems listed). */
export function registerConfigSection(check: (config: Record<string, unknown>) => string[]): void {
  extraValidators.push(check)
}

export function loadConfig(env: Env, overrides: unknown = {}): Config {
  let raw = readYamlFile(DEFAULT_CONFIG_PATH)
  if (env.RULEKEEPER_CONFIG) raw = layer(raw, readYamlFile(env.RULEKEEPER_CONFIG))
  raw = layer(raw, envOverrides(env))
  raw = layer(raw, overrides)
  const ajv = new Ajv({ allErrors: true, strict: false })
  const validate = ajv.compile(configSchema)
  const problems: string[] = []
  if (!validate(raw)) {
    for (const e of validate.errors ?? []) problems.push(`${e.instancePath || '/'} ${e.message ?? 'is invalid'}`)
  }
  for (const check of extraValidators) problems.push(...check(raw as Record<string, unknown>))
  if (problems.length > 0)
    throw new RulekeeperError('ConfigInvalid', `invalid configuration:\n  ${problems.join('\n  ')}`)
  return raw as Config
}
