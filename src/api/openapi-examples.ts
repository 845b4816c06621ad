// Examples of the OpenAPI document: a write body and the rule it reads back as, per kind (a kind
// without one is documented without examples), an error answer, and a log type. Spectral checks
// each against its schema (oas3-valid-media-example), so they cannot drift from the schemas.
import type { RuleKind } from '../rules/model.js'

const META = {
  createdByExternal: '',
  createdAt: '2026-01-05T09:30:00.000Z',
  createdBy: { id: 'tok_Q2x8Vd1mT0aa', type: 'api-token' },
  lastModified: '2026-01-05T09:30:00.000Z',
  lastModifiedBy: { id: 'tok_Q2x8Vd1mT0aa', type: 'api-token' },
  warnings: [],
}
const COMMON = {
  enabled: true,
  description: '',
  reference: '',
  runbook: '',
  createAlert: true,
  dedupPeriodMinutes: 60,
  threshold: 1,
  outputIDs: [],
  reports: {},
  summaryAttributes: [],
  tags: [],
  managed: false,
}

const simpleWrite = {
  id: 'AWS.Console.Login',
  displayName: 'Console login',
  severity: 'HIGH',
  logTypes: ['AWS.CloudTrail'],
  detection: '- KeyPath: eventName\n  Condition: Equals\n  Value: ConsoleLogin\n',
  tests: [{ name: 'console login', expectedResult: true, log: { eventName: 'ConsoleLogin' }, mocks: [] }],
}
const scheduledWrite = {
  id: 'Editor.Audit.AdminGrantsBurst',
  displayName: 'Burst of admin role grants',
  severity: 'MEDIUM',
  scheduledQueries: ['Editor.Audit.AdminGrants.Hourly'],
  body: 'def rule(event):\n    return int(event.get("grants", 0)) >= 3\n',
  tests: [{ name: 'three grants', expectedResult: true, log: { GRANTS: 3 }, mocks: [] }],
}
const pythonWrite = {
  id: 'Editor.Audit.TeamHookScriptAdded',
  displayName: 'Editor team hook with a script added or changed',
  severity: 'MEDIUM',
  logTypes: ['Editor.Audit'],
  inlineFilters: '- KeyPath: team_hook.action\n  Condition: IsIn\n  Values: [create, update]\n',
  body: 'def rule(event):\n    return bool(event.deep_get("team_hook", "script_content"))\n\n\ndef dedup(event):\n    return event.deep_get("team_hook", "hook_id", default="unknown-hook")\n',
  tests: [
    {
      name: 'hook with a script created',
      expectedResult: true,
      log: { team_hook: { action: 'create', hook_id: 'h-17', script_content: 'make lint' } },
      mocks: [],
    },
  ],
}
const correlationWrite = {
  id: 'Editor.Audit.BruteForceThenSuccess',
  displayName: 'Failed logins, then a success',
  severity: 'HIGH',
  detection:
    '- Sequence:\n    - ID: Failures\n      RuleID: Editor.Audit.LoginFailed\n      MinMatchCount: 5\n    - ID: Success\n      RuleID: Editor.Audit.LoginSucceeded\n  Transitions:\n    - ID: Failures FOLLOWED BY Success\n      From: Failures\n      To: Success\n      WithinTimeFrameMinutes: 60\n      Match:\n        - On: p_alert_context.actor\n  LookbackWindowMinutes: 90\n  Schedule:\n    RateMinutes: 60\n    TimeoutMinutes: 5\n',
  tests: [
    {
      name: 'failures then success',
      expectedResult: true,
      ruleOutputs: [
        { id: 'Failures', matches: { 'p_alert_context.actor': { 'dana@example.com': [0, 2, 4, 6, 8] } } },
        { id: 'Success', matches: { 'p_alert_context.actor': { 'dana@example.com': [12] } } },
      ],
    },
  ],
}

export const RULE_EXAMPLES: Partial<Record<RuleKind, { write: object; read: object }>> = {
  simple: { write: simpleWrite, read: { ...COMMON, ...simpleWrite, ...META } },
  scheduled: { write: scheduledWrite, read: { ...COMMON, ...scheduledWrite, ...META } },
  python: { write: pythonWrite, read: { ...COMMON, ...pythonWrite, ...META } },
  correlation: {
    write: correlationWrite,
    read: {
      ...COMMON,
      ...correlationWrite,
      correlationRuleReferenceIds: ['Editor.Audit.LoginFailed', 'Editor.Audit.LoginSucceeded'],
      logTypes: ['Editor.Audit'],
      ...META,
    },
  },
}

export const ERROR_EXAMPLES = {
  invalid: {
    message: 'the request body is invalid',
    code: 'ValidationFailed',
    errors: [
      { path: '/severity', message: 'severity must be one of INFO, LOW, MEDIUM, HIGH, CRITICAL' },
      { path: '/detection', message: 'invalid YAML: unexpected end of the stream', line: 3, column: 1 },
    ],
  },
}

/** One log type as `GET /log-types` lists it (two of its fields). */
export const LOG_TYPE_EXAMPLE = {
  name: 'Editor.Audit',
  table: 'panther_logs.public.editor_audit',
  fields: [
    { name: 'metadata.timestamp', type: 'string', required: true, description: 'when the event happened' },
    { name: 'login.success', type: 'boolean', required: false, description: 'whether the login succeeded' },
  ],
}
