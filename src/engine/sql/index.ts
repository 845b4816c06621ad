// The engine of the query kinds (rules/kinds/queries.ts): check() the keys the format requires of a
// query (one SQL key; a schedule by cron or by rate, not both), and the SQL bound by DuckDB
// (sql-check.ts) whenever the file is read into an index and on API writes. Queries have no
// unit tests; detection does not run them per record.
import type { SqlChecker, SqlProblem } from './sql-check.js'
import { sqlKeyOf } from './sql-key.js'
import { isPlainObject } from '../../is-plain-object.js'
import type { RuleFile, RuleKind, RuleProblem } from '../../rules/model.js'
import type { CheckResult, RuleEngine } from '../engine.js'

function check(rule: RuleFile, scheduled: boolean): CheckResult {
  const errors: RuleProblem[] = []
  const warnings: RuleProblem[] = []
  const d = rule.data
  if (!['Query', 'SnowflakeQuery', 'AthenaQuery'].some((k) => typeof d[k] === 'string'))
    errors.push({ path: ['Query'], message: 'one of Query, SnowflakeQuery or AthenaQuery is required' })
  else if (sqlKeyOf(d) === undefined)
    warnings.push({ path: ['AthenaQuery'], message: 'an AthenaQuery alone is neither checked nor run here: add Query' })
  if (scheduled && isPlainObject(d.Schedule)) {
    const by = ['CronExpression', 'RateMinutes'].filter((k) => (d.Schedule as Record<string, unknown>)[k] !== undefined)
    if (by.length !== 1)
      errors.push({
        path: ['Schedule'],
        message: `Schedule needs exactly one of CronExpression and RateMinutes (${by.length === 0 ? 'has neither' : 'has both'})`,
      })
  }
  return { errors, warnings }
}

/** The SQL's problem as the file's: at the SQL key, with its position inside the SQL when DuckDB gives one. */
async function bind(checker: SqlChecker, rule: RuleFile): Promise<RuleProblem[]> {
  const key = sqlKeyOf(rule.data)
  if (!key) return []
  let problem: SqlProblem | undefined
  try {
    problem = await checker.check(String(rule.data[key]))
  } catch (err) {
    // The checking process could not run (it would not start): the file cannot be judged, so it is
    // not served as valid; its last good version keeps serving, and the next read checks it again.
    problem = { message: `the SQL could not be checked here: ${err instanceof Error ? err.message : String(err)}` }
  }
  if (!problem) return []
  const where =
    problem.line === undefined
      ? ''
      : ` (line ${problem.line}${problem.column === undefined ? '' : `, column ${problem.column}`} of the SQL)`
  return [
    {
      path: [key],
      message: `the SQL does not run here${where}: ${problem.message}`,
      code: 'QueryDoesNotBind',
      ...(problem.line !== undefined ? { inValue: { line: problem.line, column: problem.column } } : {}),
    },
  ]
}

/** The engine of a query kind; `scheduled`: its files have a Schedule to check. */
export function sqlEngine(kind: RuleKind, checker: SqlChecker, opts: { scheduled: boolean }): RuleEngine {
  return {
    kind,
    check: (rule) => check(rule, opts.scheduled),
    runTests: async () => [],
    checkAsync: (rule) => bind(checker, rule),
    checkIndexed: (rule) => bind(checker, rule),
    close: () => checker.close(),
  }
}
