// The index-time check of a query file's SQL: bound by DuckDB against the log-type tables without
// running. Its own small DuckDB (one thread, no files: each table is an empty view of the same
// columns, event-tables.ts; the signals table too, signal-tables.ts), opened on the first check, so repository loads, API writes and
// `rulekeeper validate` judge a query alike whether or not any event is stored.
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api'
import { RulekeeperError } from '../errors.js'
import type { LogType } from '../ingest/log-type.js'
import { tableViews } from './event-tables.js'
import { prepareSelect } from './prepare-select.js'
import { signalViews } from './signal-tables.js'

/** Why a query cannot run: DuckDB's message, and where in the SQL text when DuckDB says. */
export interface SqlProblem {
  message: string
  line?: number
  column?: number
}

export class SqlChecker {
  private opening: Promise<{ instance: DuckDBInstance; conn: DuckDBConnection }> | undefined
  /** One check at a time on the one connection. */
  private chain: Promise<unknown> = Promise.resolve()

  constructor(private readonly logTypes: () => readonly LogType[]) {}

  private open() {
    this.opening ??= (async () => {
      const instance = await DuckDBInstance.create(':memory:', {
        threads: '1',
        memory_limit: '64MB',
        autoinstall_known_extensions: 'false',
        autoload_known_extensions: 'false',
        temp_directory: '',
      })
      const conn = await instance.connect()
      await conn.run(`SET TimeZone = 'UTC'`)
      await conn.run(`ATTACH ':memory:' AS panther_logs`)
      await conn.run('CREATE SCHEMA panther_logs.public')
      for (const lt of this.logTypes()) for (const stmt of tableViews('', lt, false)) await conn.run(stmt)
      await conn.run(`ATTACH ':memory:' AS panther_signals`)
      await conn.run('CREATE SCHEMA panther_signals.public')
      for (const stmt of signalViews('', {})) await conn.run(stmt)
      await conn.run('SET enable_external_access = false')
      await conn.run('SET lock_configuration = true')
      return { instance, conn }
    })()
    return this.opening
  }

  /** The problem of `sql` (undefined: it binds, as one SELECT). */
  check(sql: string, nowMs = Date.now()): Promise<SqlProblem | undefined> {
    const run = this.chain.then(async () => {
      const { conn } = await this.open()
      try {
        ;(await prepareSelect(conn, sql, nowMs)).destroySync()
        return undefined
      } catch (err) {
        if (!(err instanceof RulekeeperError)) throw err
        const { line, column } = err.body as { line?: number; column?: number }
        return { message: err.message, ...(line !== undefined ? { line } : {}), ...(column ? { column } : {}) }
      }
    })
    this.chain = run.catch(() => undefined)
    return run
  }

  async close(): Promise<void> {
    const opened = await this.opening?.catch(() => undefined)
    this.opening = undefined
    opened?.conn.closeSync()
    opened?.instance.closeSync()
  }
}
