// Which destinations an alert goes to (alerts.md §4, Panther's order of precedence): the list a
// Python rule's destinations() returned, else the rule's OutputIds, else every destination subscribed
// to the alert's severity (the severity the alert carries: DynamicSeverities/severity() first, so
// Panther's "generated severity" before "static severity" holds). destinations() returning [] or
// "SKIP" (or a list holding "SKIP") routes nowhere; None, an empty or absent OutputIds: not set.
import type { RuleProblem } from '../rules/model.js'
import type { Destination } from './config.js'

export interface RouteInput {
  severity: string
  outputIds: readonly string[]
  /** What destinations() returned; undefined when the rule has none, null when it returned None. */
  dynamic?: unknown
}

export interface Route {
  /** Configured destination ids, in configuration order, without repeats. */
  ids: string[]
  /** Which step decided: destinations(), OutputIds or severity. */
  by: 'destinations()' | 'OutputIds' | 'severity'
  /** Names the rule gave that no configured destination has (dropped, reported as warnings). */
  unknown: string[]
}

export function route(input: RouteInput, destinations: readonly Destination[]): Route {
  const known = new Set(destinations.map((d) => d.id))
  const pick = (names: readonly string[], by: Route['by']): Route => {
    const wanted = new Set(names)
    return {
      ids: destinations.filter((d) => wanted.has(d.id)).map((d) => d.id),
      by,
      unknown: [...wanted].filter((n) => !known.has(n)),
    }
  }
  const dyn = input.dynamic
  if (dyn !== undefined && dyn !== null) {
    if (dyn === 'SKIP') return { ids: [], by: 'destinations()', unknown: [] }
    const names = Array.isArray(dyn) ? dyn.filter((x): x is string => typeof x === 'string') : []
    if (names.includes('SKIP')) return { ids: [], by: 'destinations()', unknown: [] }
    return pick(names, 'destinations()')
  }
  if (input.outputIds.length > 0) return pick(input.outputIds, 'OutputIds')
  return {
    ids: destinations.filter((d) => d.severities.includes(input.severity.toUpperCase())).map((d) => d.id),
    by: 'severity',
    unknown: [],
  }
}

/** Every (rule, OutputId) pair naming no configured destination: the warnings of `/status`. */
export function unknownOutputIds(
  rules: Iterable<{ id: string; outputIds: readonly string[] }>,
  destinations: readonly Destination[],
): Array<{ ruleId: string; outputId: string }> {
  const known = new Set(destinations.map((d) => d.id))
  const out: Array<{ ruleId: string; outputId: string }> = []
  for (const r of rules) for (const o of r.outputIds) if (!known.has(o)) out.push({ ruleId: r.id, outputId: o })
  return out.sort((a, b) => (a.ruleId !== b.ruleId ? (a.ruleId < b.ruleId ? -1 : 1) : a.outputId < b.outputId ? -1 : 1))
}

/**
 * The rule-validation warnings (alerts.md §4: a warning, not an error, since destinations are
 * configured per deployment): one per OutputIds entry naming no destination in `known`.
 */
export function unknownOutputIdWarnings(outputIds: readonly string[], known: ReadonlySet<string>): RuleProblem[] {
  const unknown = [...new Set(outputIds)].filter((o) => !known.has(o))
  if (unknown.length === 0) return []
  const routed = outputIds.some((o) => known.has(o))
  return unknown.map((o) => ({
    path: ['OutputIds'],
    code: 'UnknownOutputId',
    message:
      `OutputIds: ${JSON.stringify(o)} is not a configured destination; ` +
      (routed
        ? 'alerts of this rule go only to the configured ones it names'
        : 'alerts of this rule go to no destination (OutputIds overrides severity routing)'),
  }))
}
