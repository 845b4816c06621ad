// Scheduled rules: a Python module (the `.py` named by `Filename`, beside the YAML file) run over
// the results of scheduled queries (engine/python/), behind optional InlineFilters.
import { INLINE_FILTERS_FIELD, managedField, PYTHON_TESTS, ruleFields, STRING_LIST_SCHEMA } from '../fields.js'
import type { RuleKindDef } from './kind.js'
import { PYTHON_ALERT_KEY_FIELDS, PYTHON_MODULE_KIND } from './python-module.js'

/** A new scheduled rule over one scheduled query's rows, a test that matches and one that does not. */
const TEMPLATE = {
  id: 'Custom.NewScheduledRule',
  displayName: 'A new scheduled rule',
  severity: 'MEDIUM',
  enabled: true,
  scheduledQueries: ['My.Scheduled.Query'],
  tests: [
    { name: 'many grants', expectedResult: true, log: { grants: 3 } },
    { name: 'one grant', expectedResult: false, log: { grants: 1 } },
  ],
  body: 'def rule(event):\n    return event.get("grants", 0) > 1\n',
}

export const scheduled: RuleKindDef<'scheduled'> = {
  name: 'scheduled',
  title: 'ScheduledRule',
  label: 'Scheduled',
  template: TEMPLATE,
  apiPath: 'scheduled-rules',
  analysisType: 'scheduled_rule',
  folder: 'scheduled_rules',
  fields: ruleFields(
    [
      managedField(false),
      {
        api: 'scheduledQueries',
        file: 'ScheduledQueries',
        schema: STRING_LIST_SCHEMA,
        default: [],
        alwaysWritten: true,
      },
      // Applied before rule() (§4); real scheduled rules carry them (§5.2).
      INLINE_FILTERS_FIELD,
      ...PYTHON_ALERT_KEY_FIELDS,
    ],
    PYTHON_TESTS,
  ),
  ...PYTHON_MODULE_KIND,
  listFilters: [
    { param: 'scheduled-query', field: 'scheduledQueries', description: 'uses any of these scheduled queries' },
  ],
  unavailableOn: [],
  missingEngine: 'the Python test runner for scheduled rules is not available in this build',
}
