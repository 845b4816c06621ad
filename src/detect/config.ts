// The `detection:` config section: the limits of `POST /replay` (how many run at once, how many
// stored bytes one may read). Checked by loadConfig with every other section (registered at module
// load); `replayLimits` turns the raw section into trusted settings with the defaults.
import { registerConfigSection } from '../config/load.js'
import { isPlainObject } from '../is-plain-object.js'

export interface ReplayLimits {
  /** Replays running at once; one more is answered 503 with Retry-After. */
  concurrency: number
  /** Stored bytes (the data files of the hours [from, to) meets) one replay may read; more is a 400. */
  maxBytes: number
}

export const DEFAULT_REPLAY_LIMITS: ReplayLimits = { concurrency: 1, maxBytes: 8 * 1024 ** 3 }

const isPositiveInt = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1

function checkDetectionConfig(config: Record<string, unknown>): string[] {
  const d = config.detection
  if (d === undefined) return []
  if (!isPlainObject(d)) return ['/detection must be an object']
  const problems: string[] = []
  for (const k of Object.keys(d)) if (k !== 'replay') problems.push(`/detection/${k} is not a detection setting`)
  if (d.replay === undefined) return problems
  if (!isPlainObject(d.replay)) return [...problems, '/detection/replay must be an object']
  for (const [k, v] of Object.entries(d.replay)) {
    if (!(k in DEFAULT_REPLAY_LIMITS)) problems.push(`/detection/replay/${k} is not a replay limit`)
    else if (!isPositiveInt(v)) problems.push(`/detection/replay/${k} must be a positive integer`)
  }
  return problems
}

/** The replay limits of a checked configuration, defaults filled in. */
export function replayLimits(config: Record<string, unknown>): ReplayLimits {
  const d = config.detection
  const r = isPlainObject(d) && isPlainObject(d.replay) ? d.replay : {}
  return { ...DEFAULT_REPLAY_LIMITS, ...(r as Partial<ReplayLimits>) }
}

registerConfigSection(checkDetectionConfig)
