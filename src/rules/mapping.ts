// API resource ⇄ file form. A rule's API view (camelCase, YAML-text fields as text, defaults
// filled in) is derived from its file data; a write body becomes file data in the canonical key
// order, leaving out optional keys that hold their default (a hand-written file keeps its own:
// rules/rule-file.ts compares effective values, so a default-valued key a person wrote stays).
import { SEVERITIES, type RuleKind, type Severity } from './model.js'
import { RULE_OUTPUT_KEYS, TEST_KEYS, type FieldSpec } from './fields.js'
import { fieldsOf, kindDef } from './kinds/index.js'
import { stringifyYaml } from './yaml-text.js'
import { isPlainObject } from '../is-plain-object.js'

/**
 * The order keys take in a file the service creates (files people wrote keep their own). A key not
 * listed (a new kind's) follows them, in the order of the kind's field table.
 */
const CANONICAL_KEY_ORDER = [
  'AnalysisType',
  'Filename',
  'RuleID',
  'PolicyID',
  'DisplayName',
  'Enabled',
  'CreateAlert',
  'LogTypes',
  'ScheduledQueries',
  'ResourceTypes',
  'Severity',
  'Description',
  'Reference',
  'Runbook',
  'Reports',
  'Tags',
  'Suppressions',
  'Detection',
  'InlineFilters',
  'AlertTitle',
  'AlertContext',
  'DynamicSeverities',
  'GroupBy',
  'Threshold',
  'DedupPeriodMinutes',
  'OutputIds',
  'SummaryAttributes',
  'AutoRemediationID',
  'AutoRemediationParameters',
  'ActionDelaySeconds',
  'Managed',
  'CreatedBy',
  'Status',
  'BaseVersion',
  'OnlyUseBaseRiskScore',
  'Tests',
]

const FILE_SEVERITY: Record<Severity, string> = {
  INFO: 'Info',
  LOW: 'Low',
  MEDIUM: 'Medium',
  HIGH: 'High',
  CRITICAL: 'Critical',
}

/** `High`, `HIGH`, `high` → `HIGH`; anything else is returned as given (the schema rejects it). */
function apiSeverity(v: unknown): unknown {
  if (typeof v !== 'string') return v
  const up = v.toUpperCase()
  return (SEVERITIES as readonly string[]).includes(up) ? up : v
}

function mapKeys(obj: unknown, table: Record<string, string>, nested?: (k: string, v: unknown) => unknown): unknown {
  if (!isPlainObject(obj)) return obj
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(obj)) {
    const nk = table[k] ?? k
    out[nk] = nested ? nested(k, v) : v
  }
  return out
}

const invert = (t: Record<string, string>) => Object.fromEntries(Object.entries(t).map(([a, b]) => [b, a]))
const TEST_KEYS_FROM_FILE = invert(TEST_KEYS)
const RULE_OUTPUT_KEYS_FROM_FILE = invert(RULE_OUTPUT_KEYS)

function testsToFile(tests: unknown): unknown {
  if (!Array.isArray(tests)) return tests
  return tests.map((t) => {
    // `mocks: []` is the default the API shows; the file leaves it out, as people write it.
    const item =
      t &&
      typeof t === 'object' &&
      Array.isArray((t as Record<string, unknown>).mocks) &&
      (t as { mocks: unknown[] }).mocks.length === 0
        ? Object.fromEntries(Object.entries(t).filter(([k]) => k !== 'mocks'))
        : t
    return mapKeys(item, TEST_KEYS, (k, v) =>
      k === 'ruleOutputs' && Array.isArray(v) ? v.map((o) => mapKeys(o, RULE_OUTPUT_KEYS)) : v,
    )
  })
}

function testsFromFile(tests: unknown): unknown {
  if (!Array.isArray(tests)) return tests
  return tests.map((t) =>
    mapKeys(t, TEST_KEYS_FROM_FILE, (k, v) =>
      k === 'RuleOutputs' && Array.isArray(v) ? v.map((o) => mapKeys(o, RULE_OUTPUT_KEYS_FROM_FILE)) : v,
    ),
  )
}

/** Python test items always show their mocks (default []) so a GET → edit → PUT round trip is exact. */
function withTestDefaults(kind: RuleKind, tests: unknown): unknown {
  if (!kindDef(kind).tests.showEmptyMocks || !Array.isArray(tests)) return tests
  return tests.map((t) => (t && typeof t === 'object' && !('mocks' in t) ? { ...t, mocks: [] } : t))
}

const deepEqual = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/**
 * Write body (validated, read-only fields removed, YAML-text fields already parsed into `structures`)
 * → file data in canonical key order. `companionName` names the kind's companion file (a scheduled
 * rule's module).
 */
export function bodyToFileData(
  kind: RuleKind,
  body: Record<string, unknown>,
  structures: Record<string, unknown>,
  companionName?: string,
): Record<string, unknown> {
  const def = kindDef(kind)
  const data: Record<string, unknown> = { AnalysisType: def.analysisType }
  if (def.companion && companionName) data[def.companion.fileKey] = companionName
  for (const f of fieldsOf(kind)) {
    if (f.readOnly) continue
    let v = f.yamlText ? structures[f.api] : body[f.api]
    if (v === undefined) {
      if (f.alwaysWritten && f.default !== undefined) data[f.file] = f.default
      continue
    }
    if (!f.alwaysWritten && f.default !== undefined && deepEqual(v, f.default)) continue
    if (f.api === 'severity') v = FILE_SEVERITY[v as Severity] ?? v
    if (f.api === 'tests') v = testsToFile(v)
    data[f.file] = v
  }
  const ordered: Record<string, unknown> = {}
  for (const k of CANONICAL_KEY_ORDER) if (k in data) ordered[k] = data[k]
  for (const k of Object.keys(data)) if (!(k in ordered)) ordered[k] = data[k]
  return ordered
}

/**
 * A YAML-text field rendered on first read (an enumerable getter, so spreads and JSON see a plain
 * string): rendering every Detection at load cost ~1.5 s of a 20k-rule rebuild, and most views are
 * only filtered, never shown.
 */
function defineLazyText(view: Record<string, unknown>, key: string, raw: unknown): void {
  let text: string | undefined
  Object.defineProperty(view, key, {
    enumerable: true,
    configurable: true,
    get: () => (text ??= stringifyYaml(raw)),
    set: (v: unknown) =>
      Object.defineProperty(view, key, { value: v, enumerable: true, writable: true, configurable: true }),
  })
}

/**
 * The effective value of one non-text field from its file value: the default for a missing or null
 * key, the API's spelling of a severity, test items with their API keys and defaults. Two file
 * values with the same effective value mean the same rule (rules/rule-file.ts keeps what was written).
 */
export function effectiveFileValue(kind: RuleKind, f: FieldSpec, raw: unknown): unknown {
  let v = raw === undefined || raw === null ? f.default : raw
  if (f.api === 'severity') v = apiSeverity(v)
  if (f.api === 'tests') v = withTestDefaults(kind, testsFromFile(v))
  if (f.api === 'id' && typeof v !== 'string' && v !== undefined) v = String(v)
  return v
}

/** File data → the API view of the rule (every field with its effective value; no metadata). */
export function fileDataToView(
  kind: RuleKind,
  data: Readonly<Record<string, unknown>>,
  companionSource?: string,
): Record<string, unknown> {
  const view: Record<string, unknown> = {}
  for (const f of fieldsOf(kind)) {
    const raw = data[f.file]
    if (f.yamlText) {
      if (raw !== undefined && raw !== null) defineLazyText(view, f.api, raw)
      else if (f.requiredOnWrite) view[f.api] = ''
      continue
    }
    const v = effectiveFileValue(kind, f, raw)
    if (v !== undefined) view[f.api] = v
  }
  const companion = kindDef(kind).companion
  if (companion) view[companion.apiField] = companionSource ?? ''
  return view
}

/** The file key of an API field of a kind (for mapping validation errors back to file paths). */
export function fileKeyOf(kind: RuleKind, api: string): string | undefined {
  return fieldsOf(kind).find((f) => f.api === api)?.file
}
