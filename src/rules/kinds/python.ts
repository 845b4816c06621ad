// Python streaming rules (`/rules`): Panther's `AnalysisType: rule` with a `Filename` (the `.py`
// beside the YAML) and no `Detection`, run over one log event by the scheduled rules' Python engine
// (engine/registry.ts), behind optional InlineFilters. The form nearly every real rule takes.
import {
  COMMON_EXTRA_FIELDS,
  INLINE_FILTERS_FIELD,
  managedField,
  PYTHON_TESTS,
  ruleFields,
  STRING_SCHEMA,
} from '../fields.js'
import type { RuleKindDef } from './kind.js'

export const python: RuleKindDef<'python'> = {
  name: 'python',
  title: 'PythonRule',
  apiPath: 'rules',
  analysisType: 'rule',
  // A `rule` with a Detection is a simple rule (simple.ts); one naming a module is this kind.
  isKind: (data) => !('Detection' in data) && 'Filename' in data,
  folder: 'rules',
  fields: ruleFields(
    [
      managedField(false),
      {
        api: 'logTypes',
        file: 'LogTypes',
        schema: { type: 'array', items: STRING_SCHEMA, minItems: 1 },
        requiredOnWrite: true,
        alwaysWritten: true,
      },
      INLINE_FILTERS_FIELD,
    ],
    PYTHON_TESTS,
  ),
  extraFields: [
    { api: 'body', schema: { type: 'string', minLength: 1 }, readOnly: false, requiredOnWrite: true },
    ...COMMON_EXTRA_FIELDS,
  ],
  requiredFileKeys: [],
  tests: PYTHON_TESTS,
  companion: { fileKey: 'Filename', apiField: 'body', placeholder: 'rule.py', noun: 'Python file' },
  listFilters: [{ param: 'log-type', field: 'logTypes', description: 'has any of these log types' }],
  pythonView: false,
  loadRank: 0,
  unavailableOn: [],
  missingEngine: 'the Python test runner for Python streaming rules is not available in this build',
}
