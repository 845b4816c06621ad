// Python streaming rules (`/rules`): Panther's `AnalysisType: rule` with a `Filename` (the `.py`
// beside the YAML) and no `Detection`, run over one log event by the scheduled rules' Python engine
// (engine/registry.ts), behind optional InlineFilters. The form nearly every real rule takes.
import { INLINE_FILTERS_FIELD, managedField, PYTHON_TESTS, ruleFields, STRING_SCHEMA } from '../fields.js'
import type { RuleKindDef } from './kind.js'
import { PYTHON_ALERT_KEY_FIELDS, PYTHON_MODULE_KIND } from './python-module.js'

/** A new Python streaming rule: rule() and title(), a test that matches and one that does not. */
const TEMPLATE = {
  id: 'Custom.NewPythonRule',
  displayName: 'A new Python rule',
  severity: 'MEDIUM',
  enabled: true,
  logTypes: ['AWS.CloudTrail'],
  tests: [
    { name: 'a console login', expectedResult: true, log: { eventName: 'ConsoleLogin' } },
    { name: 'another event', expectedResult: false, log: { eventName: 'GetObject' } },
  ],
  body: 'def rule(event):\n    return event.get("eventName") == "ConsoleLogin"\n\n\ndef title(event):\n    return f"console login by {event.get(\'userIdentity\', {}).get(\'arn\')}"\n',
}

export const python: RuleKindDef<'python'> = {
  name: 'python',
  title: 'PythonRule',
  label: 'Python',
  template: TEMPLATE,
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
      ...PYTHON_ALERT_KEY_FIELDS,
    ],
    PYTHON_TESTS,
  ),
  ...PYTHON_MODULE_KIND,
  listFilters: [{ param: 'log-type', field: 'logTypes', description: 'has any of these log types' }],
  unavailableOn: [],
  missingEngine: 'the Python test runner for Python streaming rules is not available in this build',
}
