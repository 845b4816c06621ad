// The whole language content of a simple rule, file form → validated `RuleTree`: `Detection`,
// `InlineFilters`, `AlertTitle`, `AlertContext`, `DynamicSeverities` and `GroupBy`. Top-level keys,
// ids and tests' shape belong to the rule schema, not here. Absent and null optional fields are the
// same (an empty YAML value is null). Returns every problem at once; a tree only when there are none.
import { SEVERITIES, type DataPath, type RuleProblem, type Severity } from '../../rules/model.js'
import type { ContextEntry, KeySpec, MatchExpr, RuleTree, SeverityRule, TitlePart } from './ast.js'
import { parseTitleTemplate } from './alert-fields.js'
import { DEFAULT_LIMITS, type EngineLimits } from './limits.js'
import { caseHint, ProblemSink, typeName } from './problems.js'
import { parseExpressionList } from './validate-expression.js'
import { parseKeySpecMap } from './validate-key-spec.js'
import { isPlainObject } from '../../is-plain-object.js'

export interface TreeParse {
  tree: RuleTree | null
  errors: RuleProblem[]
  warnings: RuleProblem[]
}

const present = (v: unknown) => v !== undefined && v !== null

/** The severity a file value names (any case), or null. */
function parseSeverity(v: unknown): Severity | null {
  if (typeof v !== 'string') return null
  const up = v.toUpperCase()
  return (SEVERITIES as readonly string[]).includes(up) ? (up as Severity) : null
}

export function parseRuleTree(
  data: Readonly<Record<string, unknown>>,
  limits: EngineLimits = DEFAULT_LIMITS,
): TreeParse {
  const sink = new ProblemSink(limits)
  let detection: MatchExpr[] | null = null
  if (!present(data.Detection)) sink.error(['Detection'], 'Detection is required: a list of match expressions')
  else {
    detection = parseExpressionList(data.Detection, ['Detection'], sink, 'detection')
    if (detection !== null && detection.length === 0) {
      sink.error(
        ['Detection'],
        'Detection is empty; list at least one match expression (AlwaysTrue matches every event)',
      )
      detection = null
    }
  }
  const inlineFilters = present(data.InlineFilters)
    ? parseExpressionList(data.InlineFilters, ['InlineFilters'], sink, 'filter')
    : []
  const alertTitle = parseAlertTitle(data.AlertTitle, sink)
  const alertContext = parseAlertContext(data.AlertContext, sink)
  const dynamicSeverities = parseDynamicSeverities(data.DynamicSeverities, sink)
  const groupBy = parseGroupBy(data.GroupBy, sink)

  const { errors, warnings } = sink.result()
  if (errors.length > 0 || detection === null || inlineFilters === null) return { tree: null, errors, warnings }
  const ruleId = typeof data.RuleID === 'string' ? data.RuleID : ''
  const tree: RuleTree = {
    ruleId,
    detection,
    inlineFilters,
    fallbackTitle: typeof data.DisplayName === 'string' && data.DisplayName !== '' ? data.DisplayName : ruleId,
    severity: parseSeverity(data.Severity),
  }
  if (alertTitle) tree.alertTitle = alertTitle
  if (alertContext) tree.alertContext = alertContext
  if (dynamicSeverities) tree.dynamicSeverities = dynamicSeverities
  if (groupBy) tree.groupBy = groupBy
  return { tree, errors, warnings }
}

function parseAlertTitle(raw: unknown, sink: ProblemSink): TitlePart[] | undefined {
  if (!present(raw)) return undefined
  if (typeof raw !== 'string') {
    sink.error(['AlertTitle'], `AlertTitle must be a string with {path} placeholders, not ${typeName(raw)}`)
    return undefined
  }
  const parsed = parseTitleTemplate(raw, sink.limits.maxPathSegments)
  if (!parsed.ok) {
    for (const m of parsed.messages) sink.error(['AlertTitle'], `AlertTitle: ${m}`)
    return undefined
  }
  return parsed.parts
}

/** Checks that `raw` is a list of maps with only `allowed` keys; yields the good items. */
function listOfMaps(
  raw: unknown,
  field: string,
  allowed: readonly string[],
  sink: ProblemSink,
): Array<[Record<string, unknown>, DataPath]> {
  if (!Array.isArray(raw)) {
    sink.error([field], `${field} must be a list, not ${typeName(raw)}`)
    return []
  }
  const out: Array<[Record<string, unknown>, DataPath]> = []
  raw.forEach((item, i) => {
    const at = [field, i]
    if (!isPlainObject(item)) {
      sink.error(at, `${field} items must be maps with ${allowed.join(' and ')}, not ${typeName(item)}`)
      return
    }
    for (const k of Object.keys(item)) {
      if (!allowed.includes(k))
        sink.error(
          [...at, k],
          `unknown key ${sink.quote(k)}${caseHint(k, allowed)}; ${field} items have ${allowed.join(' and ')}`,
        )
    }
    out.push([item, at])
  })
  return out
}

function parseAlertContext(raw: unknown, sink: ProblemSink): ContextEntry[] | undefined {
  if (!present(raw)) return undefined
  const entries: ContextEntry[] = []
  const seen = new Set<string>()
  for (const [item, at] of listOfMaps(raw, 'AlertContext', ['KeyName', 'KeyValue'], sink)) {
    const name = item.KeyName
    if (typeof name !== 'string' || name === '') {
      sink.error(
        name === undefined ? at : [...at, 'KeyName'],
        name === undefined
          ? 'AlertContext item needs KeyName'
          : `KeyName must be a non-empty string, not ${typeName(name)}`,
      )
    } else if (seen.has(name))
      sink.error([...at, 'KeyName'], `KeyName ${sink.quote(name)} appears twice in AlertContext`)
    else seen.add(name)
    if (item.KeyValue === undefined) {
      sink.error(at, 'AlertContext item needs KeyValue (a key specifier)')
      continue
    }
    const key = parseKeySpecMap(item.KeyValue, [...at, 'KeyValue'], sink, 'KeyValue')
    if (key !== null && typeof name === 'string') entries.push({ keyName: name, key })
  }
  return entries
}

function parseDynamicSeverities(raw: unknown, sink: ProblemSink): SeverityRule[] | undefined {
  if (!present(raw)) return undefined
  const rules: SeverityRule[] = []
  for (const [item, at] of listOfMaps(raw, 'DynamicSeverities', ['ChangeTo', 'Conditions'], sink)) {
    const changeTo = parseSeverity(item.ChangeTo)
    if (changeTo === null) {
      sink.error(
        item.ChangeTo === undefined ? at : [...at, 'ChangeTo'],
        item.ChangeTo === undefined
          ? 'DynamicSeverities item needs ChangeTo'
          : `ChangeTo must be one of ${SEVERITIES.join(', ')}, not ${sink.quote(item.ChangeTo)}`,
      )
    }
    if (item.Conditions === undefined) {
      sink.error(at, 'DynamicSeverities item needs Conditions (a list of match expressions)')
      continue
    }
    const conditions = parseExpressionList(item.Conditions, [...at, 'Conditions'], sink, 'detection')
    if (changeTo !== null && conditions !== null) rules.push({ changeTo, conditions })
  }
  return rules
}

function parseGroupBy(raw: unknown, sink: ProblemSink): KeySpec[] | undefined {
  if (!present(raw)) return undefined
  if (!Array.isArray(raw)) {
    sink.error(['GroupBy'], `GroupBy must be a list of key specifiers, not ${typeName(raw)}`)
    return undefined
  }
  if (raw.length === 0) {
    sink.warn(['GroupBy'], 'GroupBy is empty; the alert title is used as the dedup key')
    return undefined
  }
  const keys: KeySpec[] = []
  raw.forEach((item, i) => {
    const key = parseKeySpecMap(item, ['GroupBy', i], sink, 'a GroupBy item')
    if (key !== null) keys.push(key)
  })
  return keys
}
