// The one table of rule fields: API name ⇄ file key, JSON Schema, default, which kinds have it,
// and whether it is a YAML-text field or read-only. The API schemas, the OpenAPI document, the
// file ⇄ API mapping and the file checks are all derived from it, so they cannot drift apart.
import { SEVERITIES, type RuleKind } from './model.js'
import { ID_PATTERN } from './rule-id.js'

export interface FieldSpec {
  api: string
  file: string
  kinds: readonly RuleKind[]
  /** JSON Schema of the API value (OpenAPI 3.0 / draft-07 common subset). */
  schema: Record<string, unknown>
  /** Effective value when the file does not have the key. */
  default?: unknown
  requiredOnWrite?: boolean
  readOnly?: boolean
  /** Sent and returned as YAML text in the API; stored as structure in the file. */
  yamlText?: boolean
  /** Written to the file even when it holds its default (keys the file format requires). */
  alwaysWritten?: boolean
}

const ALL: readonly RuleKind[] = ['correlation', 'scheduled', 'simple']
const str = { type: 'string' }
const strList = { type: 'array', items: { type: 'string' } }

/**
 * Ids: 1–255 characters; the characters are checked by rules/rule-id.ts (the `x-rule-id` keyword,
 * see schemas.ts; `pattern` says the same for the OpenAPI document, less NFC): valid UTF-8, NFC,
 * nothing invisible or deceptive, none of < > & " %, no leading or trailing space.
 */
export const ID_SCHEMA = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  pattern: ID_PATTERN,
  'x-rule-id': true,
  description:
    'Valid UTF-8 in Unicode NFC; no control characters, line or paragraph separators, bidirectional controls, zero-width or other format characters, byte order marks, non-ASCII spaces or U+FFFD; none of < > & " %; no leading or trailing space. Unique ignoring case.',
}

const actorSchema = {
  type: 'object',
  required: ['id', 'type'],
  properties: { id: str, type: { type: 'string', enum: ['user', 'api-token', 'system'] } },
}

const mockSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['objectName', 'returnValue'],
  properties: { objectName: { type: 'string', minLength: 1 }, returnValue: { anyOf: [{ type: 'string' }, { type: 'boolean' }] } },
}

export const PYTHON_TEST_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'expectedResult', 'log'],
  properties: {
    name: { type: 'string', minLength: 1 },
    expectedResult: { type: 'boolean' },
    log: {},
    mocks: { type: 'array', items: mockSchema },
    resource: str,
  },
}

export const CORRELATION_TEST_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'expectedResult', 'ruleOutputs'],
  properties: {
    name: { type: 'string', minLength: 1 },
    expectedResult: { type: 'boolean' },
    ruleOutputs: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id'],
        properties: {
          id: { type: 'string', minLength: 1 },
          matches: {
            type: 'object',
            additionalProperties: {
              type: 'object',
              additionalProperties: { type: 'array', items: { anyOf: [{ type: 'integer' }, { type: 'string' }] } },
            },
          },
        },
      },
    },
  },
}

/** Keys of test items: API name ⇄ file key. */
export const TEST_KEYS: Record<string, string> = {
  name: 'Name',
  expectedResult: 'ExpectedResult',
  log: 'Log',
  mocks: 'Mocks',
  resource: 'Resource',
  ruleOutputs: 'RuleOutputs',
}
export const RULE_OUTPUT_KEYS: Record<string, string> = { id: 'ID', matches: 'Matches' }

export const FIELDS: readonly FieldSpec[] = [
  { api: 'id', file: 'RuleID', kinds: ALL, schema: ID_SCHEMA, requiredOnWrite: true, alwaysWritten: true },
  { api: 'displayName', file: 'DisplayName', kinds: ALL, schema: str, default: '' },
  { api: 'enabled', file: 'Enabled', kinds: ALL, schema: { type: 'boolean' }, default: true, alwaysWritten: true },
  { api: 'severity', file: 'Severity', kinds: ALL, schema: { type: 'string', enum: [...SEVERITIES] }, requiredOnWrite: true, alwaysWritten: true },
  { api: 'description', file: 'Description', kinds: ALL, schema: str, default: '' },
  { api: 'reference', file: 'Reference', kinds: ALL, schema: str, default: '' },
  { api: 'runbook', file: 'Runbook', kinds: ALL, schema: str, default: '' },
  { api: 'createAlert', file: 'CreateAlert', kinds: ALL, schema: { type: 'boolean' }, default: true },
  { api: 'dedupPeriodMinutes', file: 'DedupPeriodMinutes', kinds: ALL, schema: { type: 'integer', minimum: 1 }, default: 60 },
  { api: 'threshold', file: 'Threshold', kinds: ALL, schema: { type: 'integer', minimum: 1 }, default: 1 },
  { api: 'outputIDs', file: 'OutputIds', kinds: ALL, schema: strList, default: [] },
  { api: 'reports', file: 'Reports', kinds: ALL, schema: { type: 'object', additionalProperties: strList }, default: {} },
  { api: 'summaryAttributes', file: 'SummaryAttributes', kinds: ALL, schema: strList, default: [] },
  { api: 'tags', file: 'Tags', kinds: ALL, schema: strList, default: [] },
  { api: 'managed', file: 'Managed', kinds: ['scheduled', 'simple'], schema: { type: 'boolean' }, default: false },
  { api: 'managed', file: 'Managed', kinds: ['correlation'], schema: { type: 'boolean' }, default: false, readOnly: true },
  { api: 'detection', file: 'Detection', kinds: ['correlation', 'simple'], schema: { type: 'string', minLength: 1 }, requiredOnWrite: true, yamlText: true, alwaysWritten: true },
  { api: 'logTypes', file: 'LogTypes', kinds: ['simple'], schema: strList, default: [], alwaysWritten: true },
  { api: 'inlineFilters', file: 'InlineFilters', kinds: ['simple'], schema: str, yamlText: true },
  { api: 'alertTitle', file: 'AlertTitle', kinds: ['simple'], schema: str, yamlText: true },
  { api: 'alertContext', file: 'AlertContext', kinds: ['simple'], schema: str, yamlText: true },
  { api: 'dynamicSeverities', file: 'DynamicSeverities', kinds: ['simple'], schema: str, yamlText: true },
  { api: 'groupBy', file: 'GroupBy', kinds: ['simple'], schema: str, yamlText: true },
  { api: 'scheduledQueries', file: 'ScheduledQueries', kinds: ['scheduled'], schema: strList, default: [], alwaysWritten: true },
  { api: 'tests', file: 'Tests', kinds: ['scheduled', 'simple'], schema: { type: 'array', items: PYTHON_TEST_SCHEMA }, default: [] },
  { api: 'tests', file: 'Tests', kinds: ['correlation'], schema: { type: 'array', items: CORRELATION_TEST_SCHEMA }, default: [] },
  { api: 'createdByExternal', file: 'CreatedBy', kinds: ALL, schema: str, default: '', readOnly: true },
]

/** Fields that exist only in the API (the .py body, derived and history metadata). */
export interface ExtraField {
  api: string
  kinds: readonly RuleKind[]
  schema: Record<string, unknown>
  readOnly: boolean
  requiredOnWrite?: boolean
}

export const EXTRA_FIELDS: readonly ExtraField[] = [
  { api: 'body', kinds: ['scheduled'], schema: { type: 'string', minLength: 1 }, readOnly: false, requiredOnWrite: true },
  { api: 'pythonBody', kinds: ['simple'], schema: str, readOnly: true },
  { api: 'correlationRuleReferenceIds', kinds: ['correlation'], schema: strList, readOnly: true },
  { api: 'logTypes', kinds: ['correlation'], schema: strList, readOnly: true },
  { api: 'createdAt', kinds: ALL, schema: { type: 'string', format: 'date-time' }, readOnly: true },
  { api: 'lastModified', kinds: ALL, schema: { type: 'string', format: 'date-time' }, readOnly: true },
  {
    api: 'warnings',
    kinds: ALL,
    schema: { type: 'array', items: { type: 'object', properties: { message: str, line: { type: 'integer' }, column: { type: 'integer' } } } },
    readOnly: true,
  },
  { api: 'createdBy', kinds: ALL, schema: actorSchema, readOnly: true },
  { api: 'lastModifiedBy', kinds: ALL, schema: actorSchema, readOnly: true },
]

/** File keys that are accepted and kept but have no API field. */
export const HOUSEKEEPING_KEYS = ['AnalysisType', 'Status', 'BaseVersion', 'OnlyUseBaseRiskScore']

export function fieldsOf(kind: RuleKind): FieldSpec[] {
  return FIELDS.filter((f) => f.kinds.includes(kind))
}

export function fileKeysOf(kind: RuleKind): Set<string> {
  const keys = new Set([...fieldsOf(kind).map((f) => f.file), ...HOUSEKEEPING_KEYS])
  if (kind === 'scheduled') keys.add('Filename')
  return keys
}
