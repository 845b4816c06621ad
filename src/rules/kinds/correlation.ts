// Correlation rules: a sequence or group of other rules' alerts (engine/correlation/). Their
// `correlationRuleReferenceIds` and `logTypes` are derived when read (the engine's describe()),
// they load after the rules they refer to, and detection runs them on their schedule over the
// signals (the stored matches of those rules), not per record.
import {
  COMMON_EXTRA_FIELDS,
  CORRELATION_TESTS,
  DETECTION_FIELD,
  managedField,
  ruleFields,
  STRING_LIST_SCHEMA,
} from '../fields.js'
import type { RuleKindDef } from './kind.js'

/** A new correlation rule: one rule's alert followed by another's for the same actor. */
const TEMPLATE = {
  id: 'Custom.NewCorrelationRule',
  displayName: 'A new correlation rule',
  severity: 'HIGH',
  enabled: true,
  detection:
    '- Sequence:\n    - ID: First\n      RuleID: Some.Rule.Id\n    - ID: Then\n      RuleID: Another.Rule.Id\n  Transitions:\n    - ID: First FOLLOWED BY Then\n      From: First\n      To: Then\n      WithinTimeFrameMinutes: 30\n      Match:\n        - On: p_alert_context.actor\n  LookbackWindowMinutes: 60\n  Schedule:\n    RateMinutes: 60\n    TimeoutMinutes: 5\n',
  tests: [],
}

export const correlation: RuleKindDef<'correlation'> = {
  name: 'correlation',
  title: 'CorrelationRule',
  label: 'Correlation',
  template: TEMPLATE,
  apiPath: 'correlation-rules',
  analysisType: 'correlation_rule',
  folder: 'correlation_rules',
  fields: ruleFields([managedField(true), DETECTION_FIELD], CORRELATION_TESTS),
  extraFields: [
    { api: 'correlationRuleReferenceIds', schema: STRING_LIST_SCHEMA, readOnly: true },
    { api: 'logTypes', schema: STRING_LIST_SCHEMA, readOnly: true },
    ...COMMON_EXTRA_FIELDS,
  ],
  requiredFileKeys: ['Detection'],
  tests: CORRELATION_TESTS,
  listFilters: [],
  pythonView: false,
  loadRank: 1,
  unavailableOn: ['databricks'],
  missingEngine: 'the correlation-rule test evaluator is not available in this build',
  schedule: 'signals',
}
