// Scheduled and saved queries (`AnalysisType: scheduled_query` / `saved_query`): SQL over the event
// tables, named by `QueryName`, served and written like rules under /queries/scheduled and
// /queries/saved. Their keys are panther_analysis_tool's query schemas; the SQL is bound by DuckDB
// whenever the file is read (engine/sql/), so a query that cannot run is an invalid file.
import { ruleFieldsAs, STRING_SCHEMA, type FieldSpec, type TestStyle } from '../fields.js'
import { COMMON_EXTRA_FIELDS } from '../fields.js'
import type { RuleKindDef } from './kind.js'

/** Queries have no unit tests (the format has none): the style is never used for items. */
const NO_TESTS: TestStyle = {
  itemSchema: { type: 'object' },
  showEmptyMocks: false,
  result: (o) => ({ name: o.name, passed: o.passed === true, error: o.error }),
}

/** The common fields a query file has: its name (`QueryName`), `Description`, `Tags`, and `Enabled` (scheduled). */
const NOT_QUERY_FIELDS = [
  'displayName',
  'severity',
  'reference',
  'runbook',
  'createAlert',
  'dedupPeriodMinutes',
  'threshold',
  'outputIDs',
  'reports',
  'summaryAttributes',
  'tests',
  'createdByExternal',
]

/** The SQL, in one of the format's three keys (one is required; `Query` is the one this service runs). */
const SQL_FIELDS: readonly FieldSpec[] = [
  { api: 'query', file: 'Query', schema: { type: 'string', minLength: 1 } },
  { api: 'snowflakeQuery', file: 'SnowflakeQuery', schema: { type: 'string', minLength: 1 } },
  { api: 'athenaQuery', file: 'AthenaQuery', schema: { type: 'string', minLength: 1 } },
  { api: 'lookback', file: 'Lookback', schema: { type: 'boolean' }, default: false },
  { api: 'lookbackWindowSeconds', file: 'LookbackWindowSeconds', schema: { type: 'integer', minimum: 1 } },
]

const SCHEDULE_FIELD: FieldSpec = {
  api: 'schedule',
  file: 'Schedule',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['TimeoutMinutes'],
    description: 'When the query runs (UTC): CronExpression or RateMinutes, and TimeoutMinutes.',
    properties: {
      CronExpression: STRING_SCHEMA,
      RateMinutes: { type: 'integer', minimum: 1 },
      TimeoutMinutes: { type: 'integer', minimum: 1 },
    },
  },
  requiredOnWrite: true,
  alwaysWritten: true,
}

const COMMON = {
  extraFields: COMMON_EXTRA_FIELDS,
  tests: NO_TESTS,
  listFilters: [],
  pythonView: false,
  loadRank: 0,
  supportFile: true,
  unavailableOn: [],
  missingEngine: 'the SQL check of queries is not available in this build',
} satisfies Partial<RuleKindDef<string>>

const SQL = `SELECT user_email, COUNT(*) AS logins
FROM editor_audit
WHERE p_occurs_since('1 hour')
GROUP BY 1`

export const scheduledQuery: RuleKindDef<'scheduledQuery'> = {
  name: 'scheduledQuery',
  title: 'ScheduledQuery',
  label: 'Scheduled query',
  apiPath: 'queries/scheduled',
  analysisType: 'scheduled_query',
  folder: 'queries',
  template: {
    id: 'My.Scheduled.Query',
    enabled: true,
    description: 'Logins per user in the last hour, every hour.',
    query: SQL,
    schedule: { RateMinutes: 60, TimeoutMinutes: 5 },
  },
  fields: ruleFieldsAs({ idKey: 'QueryName', without: NOT_QUERY_FIELDS }, [...SQL_FIELDS, SCHEDULE_FIELD], NO_TESTS),
  requiredFileKeys: ['Enabled', 'Schedule'],
  ...COMMON,
}

export const savedQuery: RuleKindDef<'savedQuery'> = {
  name: 'savedQuery',
  title: 'SavedQuery',
  label: 'Saved query',
  apiPath: 'queries/saved',
  analysisType: 'saved_query',
  // A folder of its own (every kind has one); a saved query anywhere else is read the same.
  folder: 'saved_queries',
  template: { id: 'My.Saved.Query', description: 'Logins per user in the last hour.', query: SQL },
  fields: ruleFieldsAs({ idKey: 'QueryName', without: [...NOT_QUERY_FIELDS, 'enabled'] }, SQL_FIELDS, NO_TESTS),
  requiredFileKeys: [],
  ...COMMON,
}
