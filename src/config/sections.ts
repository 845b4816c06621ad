// What a configuration section owned by a feature folder gives the loader: its top-level keys and
// the check that lists its problems. config/ imports no feature folder: the sections are
// assembled above the features (config-sections.ts) and handed to loadConfig, which runs them all
// with the schema (one error lists everything) and knows their names, so a misspelt section name is
// an unknown key like any other.
import type { ConfigProblem } from './problems.js'

type Env = Record<string, string | undefined>

export interface ConfigSection {
  /** Top-level keys the section owns. */
  keys: readonly string[]
  /** `env` is given when the variables the section names must be set (serve), else undefined. */
  check(config: Record<string, unknown>, env: Env | undefined): ConfigProblem[]
}
