// The configuration sections owned by other modules, each with the check that lists its problems.
// loadConfig runs them all with the schema (one error lists everything) and knows their names, so a
// misspelt section name is an unknown key like any other.
import { checkAuditConfig } from '../ingest/config.js'
import { checkDetectionConfig } from '../detect/config.js'
import { checkDestinationConfig } from '../destinations/config.js'
import type { ConfigProblem } from './problems.js'

type Env = Record<string, string | undefined>

export interface ConfigSection {
  /** Top-level keys the section owns. */
  keys: readonly string[]
  /** `env` is given when the variables the section names must be set (serve), else undefined. */
  check(config: Record<string, unknown>, env: Env | undefined): ConfigProblem[]
}

export const CONFIG_SECTIONS: readonly ConfigSection[] = [
  { keys: ['logSources', 'audit'], check: (config) => checkAuditConfig(config) },
  { keys: ['detection'], check: (config) => checkDetectionConfig(config) },
  { keys: ['destinations', 'delivery'], check: checkDestinationConfig },
]
