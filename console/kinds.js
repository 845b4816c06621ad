// The rule kinds (policies among them) as the API names them, which field holds each kind's code, and
// the template a new rule of the kind starts from (valid, with passing tests where the kind's engine
// runs them). A hand copy of the server's kinds (src/rules/kinds/): a new kind is added here too.

export const KINDS = [
  { name: 'simple', path: 'simple-rules', label: 'Simple', python: false, logTypeFilter: true },
  { name: 'python', path: 'rules', label: 'Python', python: true, logTypeFilter: true },
  { name: 'scheduled', path: 'scheduled-rules', label: 'Scheduled', python: true, logTypeFilter: false },
  { name: 'correlation', path: 'correlation-rules', label: 'Correlation', python: false, logTypeFilter: false },
  { name: 'policy', path: 'policies', label: 'Policy', python: true, logTypeFilter: false },
]
export const kindOf = (path) => KINDS.find((k) => k.path === path)
/** The console page of a rule, from its kind as the API names it (`ruleKind` of alerts and errors). */
export const ruleHrefOfKind = (kind, id) =>
  `#/rules/${KINDS.find((k) => k.name === kind)?.path ?? `${kind}-rules`}/${encodeURIComponent(id)}`
export const SEVERITIES = ['INFO', 'LOW', 'MEDIUM', 'HIGH', 'CRITICAL']

/** Fields the server computes: left out of the editor (the server would ignore them anyway). */
export const READ_ONLY = new Set([
  'createdAt',
  'createdBy',
  'createdByExternal',
  'lastModified',
  'lastModifiedBy',
  'warnings',
  'pythonBody',
  'correlationRuleReferenceIds',
  'revision',
])
/** Correlation rules derive these. */
export const READ_ONLY_BY_KIND = { 'correlation-rules': new Set(['logTypes', 'managed']) }

export const TEMPLATES = {
  'simple-rules': {
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
  },
  rules: {
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
  },
  'scheduled-rules': {
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
  },
  'correlation-rules': {
    id: 'Custom.NewCorrelationRule',
    displayName: 'A new correlation rule',
    severity: 'HIGH',
    enabled: true,
    detection:
      '- Sequence:\n    - ID: First\n      RuleID: Some.Rule.Id\n    - ID: Then\n      RuleID: Another.Rule.Id\n  Transitions:\n    - ID: First FOLLOWED BY Then\n      From: First\n      To: Then\n      WithinTimeFrameMinutes: 30\n      Match:\n        - On: p_alert_context.actor\n  LookbackWindowMinutes: 60\n  Schedule:\n    RateMinutes: 60\n    TimeoutMinutes: 5\n',
    tests: [],
  },
  policies: {
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
  },
}
