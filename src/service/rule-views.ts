// Reads: a rule's full API representation (file view + history metadata + derived fields) and the
// filtered, paginated list. Pages are id-ordered (byte order) and a page's position is the last id
// returned (api/query.ts makes it a cursor), so a walk never repeats an id and never skips one that
// stayed unchanged meanwhile.
import type { EngineContext, EngineRegistry } from '../engine/engine.js'
import { kindDef } from '../rules/kinds/index.js'
import { dataModelsByLogType } from '../rules/data-models.js'
import type { RuleKind, RuleProblem, SupportFile } from '../rules/model.js'
import type { IndexedRule, RuleIndex } from '../rules/rule-index.js'
import type { HistoryTracker, Stamp } from './history.js'

export interface ListQuery {
  limit: number
  after: string | null
  nameContains?: string
  state?: 'enabled' | 'disabled'
  severity?: string[]
  tag?: string[]
  createdBy?: string
  lastModifiedBy?: string
  /** The kind's list filters given (rules/kinds/): the view list `field` has any of `values`. */
  anyOf?: Array<{ field: string; values: string[] }>
  includePython: boolean
}

export interface ReadContext {
  index: RuleIndex
  history: Pick<HistoryTracker, 'get'>
  engines: EngineRegistry
  /** Generates `pythonBody` for a simple rule, when this build can. */
  pythonFor?: (rule: IndexedRule) => string | undefined
  /** Warnings that depend on the deployment, not the file (OutputIds naming no configured destination). */
  ruleWarnings?: (rule: IndexedRule) => RuleProblem[]
}

// Indexes are immutable: the log type → data model map is built once per index, on first use.
const dataModelMaps = new WeakMap<RuleIndex, Map<string, SupportFile>>()

export function indexContext(index: RuleIndex): EngineContext {
  return {
    findRule: (id) => index.rules.get(id)?.file,
    findSupport: (id) => index.supports.get(id),
    findDataModel: (logType) => {
      let map = dataModelMaps.get(index)
      if (!map) dataModelMaps.set(index, (map = dataModelsByLogType(index.supports.values())))
      return map.get(logType)
    },
  }
}

const UNKNOWN_STAMP: Stamp = { commit: '', at: new Date(0).toISOString(), actor: { id: 'unknown', type: 'system' } }

const publicProblem = (p: RuleProblem) => ({
  message: p.message,
  ...(p.line !== undefined ? { line: p.line, column: p.column } : {}),
})

export function ruleRepresentation(rc: ReadContext, rule: IndexedRule, includePython = false): Record<string, unknown> {
  const h = rc.history.get(rule.id)
  const created = h?.created ?? UNKNOWN_STAMP
  const modified = h?.modified ?? UNKNOWN_STAMP
  const out: Record<string, unknown> = { ...rule.view }
  const warnings = [...rule.warnings]
  const described = rc.engines[rule.kind]?.describe?.(rule.file, indexContext(rc.index))
  if (described) {
    Object.assign(out, described.fields)
    warnings.push(...described.warnings)
  }
  if (rule.stale)
    warnings.push({
      path: [],
      message: `the file ${rule.path} is invalid in the current revision; this is its last valid version`,
    })
  if (rc.ruleWarnings) warnings.push(...rc.ruleWarnings(rule))
  if (includePython && rc.pythonFor && kindDef(rule.kind).pythonView) {
    const py = rc.pythonFor(rule)
    if (py !== undefined) out.pythonBody = py
  }
  out.createdAt = created.at
  out.createdBy = created.actor
  out.lastModified = modified.at
  out.lastModifiedBy = modified.actor
  out.warnings = warnings.map(publicProblem)
  return out
}

interface CachedJson {
  index: RuleIndex | null
  created: string
  modified: string
  json: string
}

const jsonCache = new WeakMap<IndexedRule, CachedJson>()

/**
 * The JSON text of a rule's representation, cached per indexed rule (never changed: a changed file gets a new one) and history
 * stamps; for kinds whose fields depend on other rules (describe), per index too.
 */
export function ruleJson(rc: ReadContext, rule: IndexedRule): string {
  const h = rc.history.get(rule.id)
  const created = h?.created.commit ?? ''
  const modified = h?.modified.commit ?? ''
  const index = rc.engines[rule.kind]?.describe ? rc.index : null
  const hit = jsonCache.get(rule)
  if (hit && hit.index === index && hit.created === created && hit.modified === modified) return hit.json
  const json = JSON.stringify(ruleRepresentation(rc, rule))
  jsonCache.set(rule, { index, created, modified, json })
  return json
}

function matches(rc: ReadContext, r: IndexedRule, q: ListQuery): boolean {
  const v = r.view
  if (q.state && (v.enabled === true) !== (q.state === 'enabled')) return false
  if (q.severity && !q.severity.includes(v.severity as string)) return false
  // The id or the display name (the console's `Search rules` box promises both).
  if (q.nameContains !== undefined && !r.search.name.includes(q.nameContains) && !r.search.id.includes(q.nameContains))
    return false
  if (q.tag && !q.tag.some((t) => r.search.tags.includes(t))) return false
  if (q.anyOf)
    for (const f of q.anyOf) if (!f.values.some((t) => ((v[f.field] as string[]) ?? []).includes(t))) return false
  if (q.createdBy !== undefined || q.lastModifiedBy !== undefined) {
    const h = rc.history.get(r.id)
    if (q.createdBy !== undefined && h?.created.actor.id !== q.createdBy) return false
    if (q.lastModifiedBy !== undefined && h?.modified.actor.id !== q.lastModifiedBy) return false
  }
  return true
}

/** One page of the kind's rules after `query.after`; `next` is the last id returned when more follow. */
export function listRules(
  rc: ReadContext,
  kind: RuleKind,
  query: ListQuery,
): { results: unknown[]; next: string | null } {
  // Case-insensitive filters compare with the lower-cased keys computed at index time.
  const q: ListQuery = {
    ...query,
    nameContains: query.nameContains?.toLowerCase(),
    tag: query.tag?.map((t) => t.toLowerCase()),
  }
  const results: unknown[] = []
  let last: string | null = null
  for (const id of rc.index.idsAfter(kind, q.after)) {
    const r = rc.index.rules.get(id)!
    if (!matches(rc, r, q)) continue
    if (results.length === q.limit) return { results, next: last }
    results.push(ruleRepresentation(rc, r, q.includePython))
    last = id
  }
  return { results, next: null }
}
