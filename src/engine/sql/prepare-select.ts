// One SQL text made ready to run, the same way for a request and for a query file checked at index
// time: Panther's time macros expanded and Snowflake paths rewritten, parsed and bound by DuckDB
// (prepared, not run), refused unless it is exactly one SELECT; DuckDB's errors as 400s with the
// line (and the column, when the text was not rewritten) they name.
import { type DuckDBConnection, type DuckDBPreparedStatement, StatementType } from '@duckdb/node-api'
import { RulekeeperError, badRequest } from '../../errors.js'
import { rewriteSnowflakePaths } from './snowflake-paths.js'
import { expandTimeMacros } from './time-macros.js'

/** The SQL DuckDB runs for a request's text: time macros expanded, Snowflake paths rewritten. */
export function toDuckDbSql(sql: string, nowMs: number, prune = true): string {
  return rewriteSnowflakePaths(expandTimeMacros(sql, nowMs, prune))
}

/** DuckDB's error text as a 400: its message, and the line it names (line breaks survive the rewrites). */
export function queryError(err: unknown, rewritten: boolean): RulekeeperError {
  const message = err instanceof Error ? err.message : String(err)
  const at = /\nLINE (\d+):/.exec(message)
  const body: Record<string, unknown> = {}
  if (at) body.line = Number(at[1])
  // The column only when the text DuckDB saw is the text sent (a rewrite moves columns, not lines).
  const caret = /\nLINE \d+: (.*)\n( *)\^/.exec(message)
  if (caret && !rewritten && !caret[1]!.startsWith('...'))
    body.column = caret[2]!.length - `LINE ${at?.[1]}: `.length + 1
  return new RulekeeperError('BadRequest', message.trim(), body)
}

function notSelect(sql: string): RulekeeperError {
  const word = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? 'another'
  return badRequest(`only SELECT queries may run (this is a ${word} statement)`)
}

/** Whether DuckDB's parser (nothing bound, nothing folded) reads `sql` as SELECT statements. */
async function parsesAsSelect(conn: DuckDBConnection, sql: string): Promise<boolean> {
  const result = await conn.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR) AS j', [sql])
  const parsed = JSON.parse(String(result.getRows()[0]?.[0] ?? '{}')) as { error?: boolean; error_message?: string }
  return !(parsed.error && /only SELECT/i.test(parsed.error_message ?? ''))
}

/** The prepared SELECT of `sql` (macros relative to `nowMs`), or the 400 saying why it cannot run. */
export async function prepareSelect(
  conn: DuckDBConnection,
  text: string,
  nowMs: number,
): Promise<DuckDBPreparedStatement> {
  let sql = toDuckDbSql(text, nowMs)
  let attempt = 0
  for (;;) {
    try {
      const extracted = await conn.extractStatements(sql)
      if (extracted.count !== 1) throw badRequest(`send one SQL statement (found ${extracted.count})`)
      const prepared = await extracted.prepare(0)
      if (prepared.statementType !== StatementType.SELECT) {
        prepared.destroySync()
        throw notSelect(sql)
      }
      return prepared
    } catch (err) {
      if (err instanceof RulekeeperError) throw err
      // Binding failed before the statement's kind was known (COPY … TO a path no file access may
      // reach): DuckDB's parser alone says whether it is a SELECT, and "only SELECT" is the reason.
      if (!(await parsesAsSelect(conn, sql))) throw notSelect(sql)
      // A macro aliasing a derived table: that table has no p_date/p_hour to prune on.
      if (attempt === 0 && /p_date|p_hour/.test(String(err))) {
        attempt++
        sql = toDuckDbSql(text, nowMs, false)
        continue
      }
      throw queryError(err, sql !== text)
    }
  }
}
