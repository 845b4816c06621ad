// The configuration as the service and every CLI command load it: the core schema (config/) with
// the sections the feature folders own (log sources and audit, detection, destinations and
// delivery, queries, the state store). Assembled here, above those folders, so that config/ imports none of them and every
// command checks every section, whatever else it imports.
import { type LoadOptions, loadConfig } from './config/load.js'
import type { Config } from './config/schema.js'
import type { ConfigSection } from './config/sections.js'
import { checkDetectionConfig } from './detect/config.js'
import { checkDestinationConfig } from './destinations/config.js'
import { checkAuditConfig } from './ingest/config.js'
import { checkPlanConfig } from './plans/config.js'
import { checkQueryConfig } from './query/config.js'
import { checkStateConfig } from './state/config.js'

type Env = Record<string, string | undefined>

export const CONFIG_SECTIONS: readonly ConfigSection[] = [
  { keys: ['logSources', 'audit'], check: (config) => checkAuditConfig(config) },
  { keys: ['detection'], check: (config) => checkDetectionConfig(config) },
  { keys: ['destinations', 'delivery'], check: checkDestinationConfig },
  { keys: ['queries'], check: (config) => checkQueryConfig(config) },
  { keys: ['plans'], check: (config) => checkPlanConfig(config) },
  { keys: ['state'], check: (config) => checkStateConfig(config) },
]

/** loadConfig with every feature section: one error lists every problem of the whole file. */
export function loadServiceConfig(env: Env, overrides: unknown = {}, opts: LoadOptions = {}): Config {
  return loadConfig(CONFIG_SECTIONS, env, overrides, opts)
}
