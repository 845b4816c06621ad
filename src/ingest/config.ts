// The `logSources:` and `audit:` config sections: their shape, their defaults, and the check that
// loadConfig runs with every other section (config-sections.ts lists it). resolveLogSources turns
// the raw sections into trusted settings.
import { type ConfigProblem, formatKeyPath, type KeyPath, unknownKeys } from '../config/problems.js'
import { isPlainObject } from '../is-plain-object.js'
import { logTypeNames } from './log-types.js'

type AuthMethod = 'Bearer'

export interface SourceLimits {
  /** Bytes on the wire (after any transfer framing, before gzip inflation). */
  maxCompressedBytes: number
  /** Bytes after gzip inflation: the gzip-bomb bound. */
  maxDecompressedBytes: number
  maxRecords: number
}

export interface LogSourceConfig {
  id: string
  logType: string
  auth: { method: AuthMethod; tokenEnv: string }
  limits: SourceLimits
}

export interface AuditSettings {
  /** A data file is closed and a new one started once it passes this size. */
  fileRollBytes: number
  dedupWindowHours: number
  maxErrorsInResponse: number
}

const SUPPORTED_AUTH: readonly string[] = ['Bearer']
const SOURCE_ID = /^[a-z0-9][a-z0-9-]{0,62}$/
const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/

const DEFAULT_LIMITS: SourceLimits = {
  maxCompressedBytes: 1024 * 1024,
  maxDecompressedBytes: 16 * 1024 * 1024,
  maxRecords: 10_000,
}
const DEFAULT_AUDIT: AuditSettings = {
  fileRollBytes: 128 * 1024 * 1024,
  dedupWindowHours: 24,
  maxErrorsInResponse: 20,
}

const isPositiveInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v > 0

/** Lists every problem of the two sections; an empty list means resolveLogSources will succeed. */
export function checkAuditConfig(config: Record<string, unknown>): ConfigProblem[] {
  const problems: ConfigProblem[] = []
  const audit = config.audit
  if (audit !== undefined) {
    if (!isPlainObject(audit)) problems.push({ path: ['audit'], message: 'must be a map' })
    else {
      problems.push(...unknownKeys(['audit'], audit, [...Object.keys(DEFAULT_AUDIT), 'limits']))
      for (const [k, v] of Object.entries(audit)) {
        if (k === 'limits') problems.push(...checkLimits(['audit', 'limits'], v))
        else if (k in DEFAULT_AUDIT && !isPositiveInt(v))
          problems.push({ path: ['audit', k], message: 'must be a positive integer' })
      }
    }
  }
  const sources = config.logSources
  if (sources === undefined) return problems
  if (!Array.isArray(sources)) return [...problems, { path: ['logSources'], message: 'must be a list' }]
  const seen = new Set<string>()
  const logTypes = logTypeNames()
  for (const [i, s] of sources.entries()) {
    const at = ['logSources', i]
    if (!isPlainObject(s)) {
      problems.push({ path: at, message: 'must be a map' })
      continue
    }
    problems.push(...unknownKeys(at, s, ['id', 'logType', 'auth', 'limits']))
    if (typeof s.id !== 'string' || !SOURCE_ID.test(s.id))
      problems.push({ path: [...at, 'id'], message: `must match ${SOURCE_ID.source}` })
    else if (seen.has(s.id)) problems.push({ path: [...at, 'id'], message: `"${s.id}" is used twice` })
    else seen.add(s.id)
    if (typeof s.logType !== 'string' || !logTypes.includes(s.logType)) {
      problems.push({ path: [...at, 'logType'], message: `must be one of ${logTypes.join(', ')}` })
    }
    if (!isPlainObject(s.auth)) problems.push({ path: [...at, 'auth'], message: 'must be a map' })
    else {
      problems.push(...unknownKeys([...at, 'auth'], s.auth, ['method', 'tokenEnv']))
      if (!SUPPORTED_AUTH.includes(s.auth.method as string))
        problems.push({ path: [...at, 'auth', 'method'], message: `must be one of ${SUPPORTED_AUTH.join(', ')}` })
      if (typeof s.auth.tokenEnv !== 'string' || !ENV_NAME.test(s.auth.tokenEnv)) {
        problems.push({ path: [...at, 'auth', 'tokenEnv'], message: 'must name an environment variable' })
      }
    }
    if (s.limits !== undefined) problems.push(...checkLimits([...at, 'limits'], s.limits))
  }
  return problems
}

function checkLimits(at: KeyPath, v: unknown): ConfigProblem[] {
  if (!isPlainObject(v)) return [{ path: at, message: 'must be a map' }]
  const problems = unknownKeys(at, v, Object.keys(DEFAULT_LIMITS))
  for (const [k, n] of Object.entries(v))
    if (k in DEFAULT_LIMITS && !isPositiveInt(n))
      problems.push({ path: [...at, k], message: 'must be a positive integer' })
  return problems
}

/** Settings with defaults applied. Call only on a config that passed checkAuditConfig. */
export function resolveLogSources(config: Record<string, unknown>): {
  sources: LogSourceConfig[]
  audit: AuditSettings
} {
  const problems = checkAuditConfig(config)
  if (problems.length > 0)
    throw new Error(
      `invalid log-source configuration: ${problems.map((p) => `${formatKeyPath(p.path)}: ${p.message}`).join('; ')}`,
    )
  const audit = (config.audit ?? {}) as Partial<AuditSettings> & { limits?: Partial<SourceLimits> }
  const baseLimits = { ...DEFAULT_LIMITS, ...(audit.limits ?? {}) }
  const settings: AuditSettings = {
    fileRollBytes: audit.fileRollBytes ?? DEFAULT_AUDIT.fileRollBytes,
    dedupWindowHours: audit.dedupWindowHours ?? DEFAULT_AUDIT.dedupWindowHours,
    maxErrorsInResponse: audit.maxErrorsInResponse ?? DEFAULT_AUDIT.maxErrorsInResponse,
  }
  // Checked above: every source has these shapes.
  const raw = (config.logSources ?? []) as Array<{
    id: string
    logType: string
    auth: { method: AuthMethod; tokenEnv: string }
    limits?: Partial<SourceLimits>
  }>
  const sources = raw.map((s) => ({
    id: s.id,
    logType: s.logType,
    auth: { method: s.auth.method, tokenEnv: s.auth.tokenEnv },
    limits: { ...baseLimits, ...(s.limits ?? {}) },
  }))
  return { sources, audit: settings }
}
