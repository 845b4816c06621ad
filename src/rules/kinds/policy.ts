// Policies (`/policies`): Panther's `AnalysisType: policy`, a `PolicyID` and a Python module whose
// `policy(resource)` returns True for a compliant cloud resource. Tested by the Python engine in the
// same sandbox as rules (engine/registry.ts), each test over a `Resource`; False is the alert. This
// service has no resource ingest, so policies raise no alerts here (docs/policies.md).
import { managedField, POLICY_TESTS, ruleFieldsAs, STRING_LIST_SCHEMA, STRING_SCHEMA } from '../fields.js'
import type { RuleKindDef } from './kind.js'
import { PYTHON_MODULE_KIND } from './python-module.js'

/** A new policy: policy() and title() over a bucket, a compliant and a non-compliant resource. */
const TEMPLATE = {
  id: 'Custom.NewPolicy',
  displayName: 'A new policy',
  severity: 'MEDIUM',
  enabled: true,
  resourceTypes: ['AWS.S3.Bucket'],
  tests: [
    { name: 'a versioned bucket', expectedResult: true, resource: { Name: 'logs', Versioning: 'Enabled' } },
    { name: 'an unversioned bucket', expectedResult: false, resource: { Name: 'logs', Versioning: 'Suspended' } },
  ],
  body: 'def policy(resource):\n    # True: the resource is compliant; False raises the alert (in Panther)\n    return resource.get("Versioning") == "Enabled"\n\n\ndef title(resource):\n    return f"bucket {resource.get(\'Name\')} is not versioned"\n',
}

export const policy: RuleKindDef<'policy'> = {
  name: 'policy',
  title: 'Policy',
  label: 'Policy',
  template: TEMPLATE,
  apiPath: 'policies',
  analysisType: 'policy',
  folder: 'policies',
  // panther_analysis_tool's policy schema: no alert grouping keys (Threshold, DedupPeriodMinutes,
  // CreateAlert, SummaryAttributes), and the remediation and suppression keys of policies.
  fields: ruleFieldsAs(
    { idKey: 'PolicyID', without: ['createAlert', 'dedupPeriodMinutes', 'threshold', 'summaryAttributes'] },
    [
      managedField(false),
      {
        api: 'resourceTypes',
        file: 'ResourceTypes',
        schema: STRING_LIST_SCHEMA,
        default: [],
        alwaysWritten: true,
      },
      { api: 'suppressions', file: 'Suppressions', schema: STRING_LIST_SCHEMA, default: [] },
      { api: 'autoRemediationId', file: 'AutoRemediationID', schema: STRING_SCHEMA, default: '' },
      { api: 'autoRemediationParameters', file: 'AutoRemediationParameters', schema: { type: 'object' }, default: {} },
      { api: 'actionDelaySeconds', file: 'ActionDelaySeconds', schema: { type: 'integer', minimum: 0 }, default: 0 },
    ],
    POLICY_TESTS,
  ),
  ...PYTHON_MODULE_KIND,
  tests: POLICY_TESTS,
  listFilters: [{ param: 'resource-type', field: 'resourceTypes', description: 'has any of these resource types' }],
  unavailableOn: [],
  missingEngine: 'the Python test runner for policies is not available in this build',
}
