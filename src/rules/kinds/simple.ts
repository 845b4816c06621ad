// Simple rules: a YAML detection over one log event (engine/simple/), Panther's `AnalysisType: rule`
// with a `Detection` key (a `rule` naming a module instead is a Python streaming rule, python.ts).
import {
  COMMON_EXTRA_FIELDS,
  DETECTION_FIELD,
  INLINE_FILTERS_FIELD,
  managedField,
  PYTHON_TESTS,
  ruleFields,
  STRING_LIST_SCHEMA,
  STRING_SCHEMA,
  yamlTextField as yamlText,
} from '../fields.js'
import type { RuleKindDef } from './kind.js'

/** A new simple rule: one condition, a test that matches and one that does not. */
const TEMPLATE = {
  id: 'Custom.NewSimpleRule',
  displayName: 'A new simple rule',
  severity: 'MEDIUM',
  enabled: true,
  logTypes: ['AWS.CloudTrail'],
  detection: '- KeyPath: eventName\n  Condition: Equals\n  Value: ConsoleLogin\n',
  tests: [
    { name: 'a console login', expectedResult: true, log: { eventName: 'ConsoleLogin' } },
    { name: 'another event', expectedResult: false, log: { eventName: 'GetObject' } },
  ],
}

export const simple: RuleKindDef<'simple'> = {
  name: 'simple',
  title: 'SimpleRule',
  label: 'Simple',
  template: TEMPLATE,
  apiPath: 'simple-rules',
  analysisType: 'rule',
  isKind: (data) => 'Detection' in data,
  folder: 'simple_rules',
  fields: ruleFields(
    [
      managedField(false),
      DETECTION_FIELD,
      { api: 'logTypes', file: 'LogTypes', schema: STRING_LIST_SCHEMA, default: [], alwaysWritten: true },
      INLINE_FILTERS_FIELD,
      yamlText('alertTitle', 'AlertTitle'),
      yamlText('alertContext', 'AlertContext'),
      yamlText('dynamicSeverities', 'DynamicSeverities'),
      yamlText('groupBy', 'GroupBy'),
    ],
    PYTHON_TESTS,
  ),
  extraFields: [{ api: 'pythonBody', schema: STRING_SCHEMA, readOnly: true }, ...COMMON_EXTRA_FIELDS],
  requiredFileKeys: ['Detection'],
  tests: PYTHON_TESTS,
  listFilters: [{ param: 'log-type', field: 'logTypes', description: 'has any of these log types' }],
  pythonView: true,
  loadRank: 0,
  unavailableOn: [],
  missingEngine: 'the simple-rule (YAML detection) test engine is not available in this build',
}
