// Loads the configuration: config/default.yaml, then the file named by RULEKEEPER_CONFIG layered
// over it, then the RULEKEEPER_* environment variables. Takes the environment as an argument (the
// CLI's entry, cli/index.ts, passes process.env; main.ts and tests pass what they were given) and
// checks the result whole: one error lists every problem by key path (unknown keys with the nearest
// known one), with the file line or variable it came from.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Ajv, type ValidateFunction } from 'ajv'
import YAML, { type Document, LineCounter } from 'yaml'
import { RulekeeperError } from '../errors.js'
import { isPlainObject } from '../is-plain-object.js'
import { type ConfigProblem, configInvalid, formatKeyPath, type KeyPath, problemLine } from './problems.js'
import { configSchema, type Config } from './schema.js'
import { schemaProblems } from './schema-problems.js'
import type { ConfigSection } from './sections.js'

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

interface YamlFile {
  file: string
  doc: Document
  lines: LineCounter
  value: unknown
}

function readYamlFile(file: string): YamlFile {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new RulekeeperError('ConfigInvalid', `cannot read config file ${file}: ${(err as Error).message}`)
  }
  const lines = new LineCounter()
  const doc = YAML.parseDocument(text, { version: '1.2', schema: 'core', lineCounter: lines })
  if (doc.errors.length > 0) {
    const msgs = doc.errors.map(
      (e) => `${file}:${e.linePos?.[0].line ?? '?'}:${e.linePos?.[0].col ?? '?'} ${e.message.split('\n')[0]}`,
    )
    throw new RulekeeperError('ConfigInvalid', `invalid YAML in config:\n${msgs.join('\n')}`)
  }
  return { file, doc, lines, value: doc.toJS({ maxAliasCount: 100 }) ?? {} }
}

/** The line of the deepest key of `at` written in the file (0: none of it is). */
function lineIn(f: YamlFile, at: KeyPath): number {
  let node: unknown = f.doc.contents
  let offset: number | undefined
  for (const seg of at) {
    if (YAML.isMap(node)) {
      const pair = node.items.find((p) => YAML.isScalar(p.key) && p.key.value === seg)
      if (!pair || !YAML.isScalar(pair.key)) break
      offset = pair.key.range?.[0]
      node = pair.value
    } else if (YAML.isSeq(node) && typeof seg === 'number' && node.items[seg]) {
      node = node.items[seg]
      offset = YAML.isNode(node) ? node.range?.[0] : offset
    } else break
  }
  return offset === undefined ? 0 : f.lines.linePos(offset).line
}

/** The variables' values at their key paths, and which variable set each path (for messages). */
function envOverrides(env: Env): { values: Record<string, unknown>; from: Map<string, string> } {
  const values: Record<string, unknown> = {}
  const from = new Map<string, string>()
  const set = (keys: string[], value: unknown, variable: string) => {
    let cur = values
    for (const k of keys.slice(0, -1)) cur = (cur[k] ??= {}) as Record<string, unknown>
    cur[keys[keys.length - 1]!] = value
    from.set(formatKeyPath(keys), variable)
  }
  if (env.RULEKEEPER_DATA_DIR) set(['dataDir'], env.RULEKEEPER_DATA_DIR, 'RULEKEEPER_DATA_DIR')
  if (env.RULEKEEPER_HOST) set(['server', 'host'], env.RULEKEEPER_HOST, 'RULEKEEPER_HOST')
  if (env.RULEKEEPER_PORT !== undefined && env.RULEKEEPER_PORT !== '') {
    const n = Number(env.RULEKEEPER_PORT)
    set(['server', 'port'], Number.isInteger(n) ? n : env.RULEKEEPER_PORT, 'RULEKEEPER_PORT')
  }
  if (env.RULEKEEPER_BACKEND) set(['backend', 'kind'], env.RULEKEEPER_BACKEND, 'RULEKEEPER_BACKEND')
  if (env.RULEKEEPER_GIT_URL) set(['git', 'remote', 'url'], env.RULEKEEPER_GIT_URL, 'RULEKEEPER_GIT_URL')
  if (env.RULEKEEPER_GIT_BRANCH) set(['git', 'branch'], env.RULEKEEPER_GIT_BRANCH, 'RULEKEEPER_GIT_BRANCH')
  if (env.RULEKEEPER_LOG_LEVEL) set(['log', 'level'], env.RULEKEEPER_LOG_LEVEL, 'RULEKEEPER_LOG_LEVEL')
  return { values, from }
}

/** The compiled schema per list of sections (the list is built once, above config/). */
const validators = new WeakMap<readonly ConfigSection[], ValidateFunction>()

/** The schema with the sections' names added and no other top-level key allowed. */
function validate(raw: unknown, sections: readonly ConfigSection[]): ConfigProblem[] {
  let validator = validators.get(sections)
  if (!validator) {
    const names = Object.fromEntries(sections.flatMap((s) => s.keys.map((k) => [k, {}])))
    const schema = {
      ...configSchema,
      additionalProperties: false,
      properties: { ...configSchema.properties, ...names },
    }
    validator = new Ajv({ allErrors: true, strict: false, verbose: true }).compile(schema)
    validators.set(sections, validator)
  }
  return validator(raw) ? [] : schemaProblems(validator.errors ?? [], raw)
}

export interface LoadOptions {
  /** Also require the variables the configuration names for secrets (destinations' urlEnv, secretEnv). */
  resolveSecrets?: boolean
}

/**
 * `sections`: the top-level sections other folders own, each with its check (the service's list:
 * config-sections.ts, which callers use through loadServiceConfig).
 */
export function loadConfig(
  sections: readonly ConfigSection[],
  env: Env,
  overrides: unknown = {},
  opts: LoadOptions = {},
): Config {
  let raw = readYamlFile(DEFAULT_CONFIG_PATH).value
  const file = env.RULEKEEPER_CONFIG ? readYamlFile(env.RULEKEEPER_CONFIG) : undefined
  if (file) raw = layer(raw, file.value)
  const fromEnv = envOverrides(env)
  raw = layer(raw, fromEnv.values)
  raw = layer(raw, overrides)
  const problems = validate(raw, sections)
  if (isPlainObject(raw))
    for (const section of sections) problems.push(...section.check(raw, opts.resolveSecrets ? env : undefined))
  if (problems.length === 0) return raw as Config
  // Each problem with where it came from; those of the file in the file's order, then the rest.
  const located = problems.map((p) => {
    const variable = fromEnv.from.get(formatKeyPath(p.path))
    const line = file && !variable ? lineIn(file, p.path) : 0
    const where = variable ? ` (from ${variable})` : line > 0 ? ` (${file?.file}:${line})` : ''
    return { p, line: line > 0 ? line : Number.POSITIVE_INFINITY, text: problemLine(p) + where }
  })
  located.sort((a, b) => a.line - b.line)
  throw configInvalid('invalid configuration', problems, {
    lines: located.map((l) => l.text),
    source: file ? `${file.file} layered over the defaults` : undefined,
  })
}
