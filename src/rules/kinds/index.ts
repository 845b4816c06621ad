// The registry of rule kinds. A kind is one module of this folder (a RuleKindDef, kind.ts), an
// engine in engine/<kind>/ registered under its name (engine/registry.ts), its tests — and one
// line in KINDS below. Everything that differs between kinds asks the kind through these helpers.
import { HOUSEKEEPING_KEYS, type ExtraField, type FieldSpec } from '../fields.js'
import { correlation } from './correlation.js'
import type { RuleKindDef } from './kind.js'
import { policy } from './policy.js'
import { python } from './python.js'
import { savedQuery, scheduledQuery } from './queries.js'
import { scheduled } from './scheduled.js'
import { simple } from './simple.js'

export type { RuleKindDef } from './kind.js'

/** Every rule kind, in the order the API and the OpenAPI document list them. */
export const KINDS = [correlation, scheduled, simple, python, policy, scheduledQuery, savedQuery] as const

export type RuleKind = (typeof KINDS)[number]['name']

export const RULE_KINDS: readonly RuleKind[] = KINDS.map((k) => k.name)

const BY_NAME = new Map<string, RuleKindDef<RuleKind>>(KINDS.map((k) => [k.name, k]))

export function kindDef(kind: RuleKind): RuleKindDef<RuleKind> {
  return BY_NAME.get(kind)!
}

export function isRuleKind(name: unknown): name is RuleKind {
  return typeof name === 'string' && BY_NAME.has(name)
}

/** Whether detection runs rules of the kind on their schedule over other rules' signals (correlation). */
export function runsOnSignals(kind: RuleKind): boolean {
  return kindDef(kind).schedule === 'signals'
}

/** The kind of an analysis file's data, from its `AnalysisType` (and the kind's own test). */
export function kindOfData(data: Readonly<Record<string, unknown>>): RuleKind | undefined {
  return KINDS.find((k) => data.AnalysisType === k.analysisType && (k.isKind?.(data) ?? true))?.name
}

/** The load rank of a repository path: that of the kind whose folder holds it (0 elsewhere). */
function loadRankOf(path: string): number {
  return KINDS.find((k) => path.startsWith(`${k.folder}/`))?.loadRank ?? 0
}

/** Repository paths in loading order (stable: paths of the same rank keep their order). */
export function inLoadOrder(paths: Iterable<string>): string[] {
  return [...paths].sort((a, b) => loadRankOf(a) - loadRankOf(b))
}

export function fieldsOf(kind: RuleKind): readonly FieldSpec[] {
  return kindDef(kind).fields
}

export function extraFieldsOf(kind: RuleKind): readonly ExtraField[] {
  return kindDef(kind).extraFields
}

const fileKeys = new Map<RuleKind, Set<string>>()

/** Every file key a file of the kind may have (its fields, housekeeping, the companion's key). */
export function fileKeysOf(kind: RuleKind): ReadonlySet<string> {
  let keys = fileKeys.get(kind)
  if (!keys) {
    const def = kindDef(kind)
    keys = new Set([
      ...def.fields.map((f) => f.file),
      ...HOUSEKEEPING_KEYS,
      ...(def.companion ? [def.companion.fileKey] : []),
    ])
    fileKeys.set(kind, keys)
  }
  return keys
}
