// The rule fields: API name ⇄ file key, JSON Schema, default, and whether it is a YAML-text field
// or read-only. The fields every kind has are here; each kind (rules/kinds/*.ts) lists its own
// between them. The API schemas, the OpenAPI document, the file ⇄ API mapping and the file checks
// are all derived from a kind's table, so they cannot drift apart.
import { SEVERITIES } from './severity.js'
import { ID_PATTERN } from './rule-id.js'

export interface FieldSpec {
  api: string
  file: string
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

const str = { type: 'string' }
const strList = { type: 'array', items: { type: 'string' } }

/**
 * Ids: 1–255 characters; the characters are checked by rules/rule-id.ts (the `x-rule-id` keyword,
 * see schemas.ts; `pattern` says the same for the OpenAPI document, less NFC): valid UTF-8, NFC,
 * nothing invisible or deceptive, none of < > & " %, no leading or trailing space.
 */
const ID_SCHEMA = {
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
  properties: {
    objectName: { type: 'string', minLength: 1 },
    returnValue: { anyOf: [{ type: 'string' }, { type: 'boolean' }] },
  },
}

const PYTHON_TEST_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'expectedResult', 'log'],
  properties: {
    name: { type: 'string', minLength: 1 },
    expectedResult: { type: 'boolean' },
    log: {},
    mocks: { type: 'array', items: mockSchema },
    resource: str,
    /** The log type of the test's event (the file's `LogType`, §5.2). */
    logType: str,
  },
}

/** A policy's test (panther_analysis_tool's policy schema): a `Resource` instead of a `Log`. */
const POLICY_TEST_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'expectedResult', 'resource'],
  properties: {
    name: { type: 'string', minLength: 1 },
    expectedResult: { type: 'boolean' },
    resource: { type: 'object' },
    mocks: { type: 'array', items: mockSchema },
    /** Kept for older files; the tool no longer reads it. */
    resourceType: str,
  },
}

const CORRELATION_TEST_SCHEMA = {
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
  resourceType: 'ResourceType',
  logType: 'LogType',
  ruleOutputs: 'RuleOutputs',
}
export const RULE_OUTPUT_KEYS: Record<string, string> = { id: 'ID', matches: 'Matches' }

/** Fields every kind has, before its own (the order is the API view's and the schemas'). */
const COMMON_FIELDS: readonly FieldSpec[] = [
  { api: 'id', file: 'RuleID', schema: ID_SCHEMA, requiredOnWrite: true, alwaysWritten: true },
  { api: 'displayName', file: 'DisplayName', schema: str, default: '' },
  { api: 'enabled', file: 'Enabled', schema: { type: 'boolean' }, default: true, alwaysWritten: true },
  {
    api: 'severity',
    file: 'Severity',
    schema: { type: 'string', enum: [...SEVERITIES] },
    requiredOnWrite: true,
    alwaysWritten: true,
  },
  { api: 'description', file: 'Description', schema: str, default: '' },
  { api: 'reference', file: 'Reference', schema: str, default: '' },
  { api: 'runbook', file: 'Runbook', schema: str, default: '' },
  { api: 'createAlert', file: 'CreateAlert', schema: { type: 'boolean' }, default: true },
  { api: 'dedupPeriodMinutes', file: 'DedupPeriodMinutes', schema: { type: 'integer', minimum: 1 }, default: 60 },
  { api: 'threshold', file: 'Threshold', schema: { type: 'integer', minimum: 1 }, default: 1 },
  { api: 'outputIDs', file: 'OutputIds', schema: strList, default: [] },
  // Numbers in a file's lists are read as strings (rules/reports.ts); the API takes strings only.
  { api: 'reports', file: 'Reports', schema: { type: 'object', additionalProperties: strList }, default: {} },
  { api: 'summaryAttributes', file: 'SummaryAttributes', schema: strList, default: [] },
  { api: 'tags', file: 'Tags', schema: strList, default: [] },
]

/** Fields every kind has, after its own. */
const COMMON_TRAILING_FIELDS: readonly FieldSpec[] = [
  { api: 'createdByExternal', file: 'CreatedBy', schema: str, default: '', readOnly: true },
]

/** Building blocks the kinds share (rules/kinds/*.ts). */
export const managedField = (readOnly: boolean): FieldSpec => ({
  api: 'managed',
  file: 'Managed',
  schema: { type: 'boolean' },
  default: false,
  ...(readOnly ? { readOnly: true } : {}),
})
export const DETECTION_FIELD: FieldSpec = {
  api: 'detection',
  file: 'Detection',
  schema: { type: 'string', minLength: 1 },
  requiredOnWrite: true,
  yamlText: true,
  alwaysWritten: true,
}
/** A field sent and returned as YAML text, stored as structure in the file. */
export const yamlTextField = (api: string, file: string): FieldSpec => ({ api, file, schema: str, yamlText: true })
/** `InlineFilters`: the simple-rule filter language, on simple and Python rules alike (§1.4, §4). */
export const INLINE_FILTERS_FIELD = yamlTextField('inlineFilters', 'InlineFilters')
const testsField = (style: TestStyle): FieldSpec => ({
  api: 'tests',
  file: 'Tests',
  schema: { type: 'array', items: style.itemSchema },
  default: [],
})
export { str as STRING_SCHEMA, strList as STRING_LIST_SCHEMA }

/** A kind's whole field table: the common fields, its own, the common trailing ones. */
/** A kind's field table: the common fields, its own, its tests (in its test style), the trailing ones. */
export const ruleFields = (own: readonly FieldSpec[], tests: TestStyle): readonly FieldSpec[] => [
  ...COMMON_FIELDS,
  ...own,
  testsField(tests),
  ...COMMON_TRAILING_FIELDS,
]

/**
 * The field table of a kind whose format differs in the common part (policies): its id under
 * another file key (`PolicyID`), and without the common fields its format does not have.
 */
export const ruleFieldsAs = (
  as: { idKey: string; without: readonly string[] },
  own: readonly FieldSpec[],
  tests: TestStyle,
): readonly FieldSpec[] =>
  ruleFields(own, tests)
    .filter((f) => !as.without.includes(f.api))
    .map((f) => (f.api === 'id' ? { ...f, file: as.idKey } : f))

/** What one test result says in the API, from the engine's outcome. */
interface TestOutcomeLike {
  name: string
  passed: boolean | null
  error: string | null
  errored?: boolean
  functions?: Record<string, unknown>
}

/** The shape of a kind's unit tests: the item schema, the item defaults the view shows, the result. */
export interface TestStyle {
  itemSchema: Record<string, unknown>
  /** Python test items always show their mocks (default []) so a GET → edit → PUT round trip is exact. */
  showEmptyMocks: boolean
  result(o: TestOutcomeLike): Record<string, unknown>
}

export const PYTHON_TESTS: TestStyle = {
  itemSchema: PYTHON_TEST_SCHEMA,
  showEmptyMocks: true,
  result: (o) => ({
    name: o.name,
    passed: o.passed === true,
    errored: o.errored ?? false,
    error: o.error,
    functions: o.functions ?? {},
  }),
}

/** Policies: the Python verdict and result, over a `resource` (the `log` of a Python test). */
export const POLICY_TESTS: TestStyle = { ...PYTHON_TESTS, itemSchema: POLICY_TEST_SCHEMA }

export const CORRELATION_TESTS: TestStyle = {
  itemSchema: CORRELATION_TEST_SCHEMA,
  showEmptyMocks: false,
  result: (o) => ({ name: o.name, passed: o.passed === true, error: o.error }),
}

/** Fields that exist only in the API (the .py body, derived and history metadata). */
export interface ExtraField {
  api: string
  schema: Record<string, unknown>
  readOnly: boolean
  requiredOnWrite?: boolean
}

/** API-only fields every kind has, after its own. */
export const COMMON_EXTRA_FIELDS: readonly ExtraField[] = [
  { api: 'createdAt', schema: { type: 'string', format: 'date-time' }, readOnly: true },
  { api: 'lastModified', schema: { type: 'string', format: 'date-time' }, readOnly: true },
  {
    api: 'warnings',
    schema: {
      type: 'array',
      items: { type: 'object', properties: { message: str, line: { type: 'integer' }, column: { type: 'integer' } } },
    },
    readOnly: true,
  },
  { api: 'createdBy', schema: actorSchema, readOnly: true },
  { api: 'lastModifiedBy', schema: actorSchema, readOnly: true },
]

/** File keys that are accepted and kept but have no API field. */
export const HOUSEKEEPING_KEYS = ['AnalysisType', 'Status', 'BaseVersion', 'OnlyUseBaseRiskScore']
