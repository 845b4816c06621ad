// The console's helpers over the server's rule kinds and log types (`GET /kinds`, `GET /log-types`,
// loaded by api.js at start): a kind by its path (encoded in page addresses: a path may hold a
// slash), the page of a rule from its kind's name, the
// writable fields of a rule. Nothing here lists a kind or a log type: a new kind needs no change.
import { catalog } from './api.js'

export const SEVERITIES = ['INFO', 'LOW', 'MEDIUM', 'HIGH', 'CRITICAL']

/** Every rule kind, in the order the server lists them. */
export const kinds = () => catalog().kinds
/** The names of the log types the server ingests. */
export const logTypeNames = () => catalog().logTypes.map((l) => l.name)
export const kindOf = (path) => kinds().find((k) => k.path === path)
/** The console page of a rule, from its kind as the API names it (`ruleKind` of alerts and errors). */
export const ruleHrefOfKind = (kind, id) =>
  `#/rules/${encodeURIComponent(kinds().find((k) => k.name === kind)?.path ?? `${kind}-rules`)}/${encodeURIComponent(id)}`

/** The fields of a rule a writer sends: its kind's read-only fields (the server computes them) left out. */
export function writableFields(kind, rule) {
  const skip = new Set(kind.readOnlyFields)
  return Object.fromEntries(Object.entries(rule).filter(([k]) => !skip.has(k)))
}
