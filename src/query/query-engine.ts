// The query engine over the stored events: one embedded DuckDB (in process: DuckDB runs each query
// on its own threads, the JS thread only awaits it), the event tables as views (event-tables.ts),
// and the confinement every query runs under: external access off but for the log types' folders,
// configuration locked, extensions never installed or loaded, one SELECT per request, a time limit
// that interrupts the query, bounded memory and threads; the work runs on DuckDB's own workers at
// a lower priority (background-run.ts, thread-priority.ts) (docs/queries.md, docs/security.md).
import fs from 'node:fs'
import path from 'node:path'
import { type DuckDBConnection, DuckDBInstance, StatementType } from '@duckdb/node-api'
import { RulekeeperError, badRequest } from '../errors.js'
import type { LogType } from '../ingest/log-type.js'
import { streamOnWorkers } from './background-run.js'
import { lowerNewThreads, threadIds } from './thread-priority.js'
import type { QuerySettings } from './config.js'
import { logTypeDir, tableViews } from './event-tables.js'
import { type JsonValue, jsonColumnValue, toJson } from './json-values.js'
import { rewriteSnowflakePaths } from './snowflake-paths.js'
import { expandTimeMacros } from './time-macros.js'

export interface QueryColumn {
  name: string
  /** DuckDB's type, as DESCRIBE writes it (`VARCHAR`, `BIGINT`, `STRUCT(a INTEGER)`, `JSON`…). */
  type: string
}

export interface QueryRequest {
  sql: string
  /** The time the macros are relative to (the request's time, or a scheduled run's slot). */
  nowMs: number
  /** Rows to skip, then rows to answer at most. */
  offset: number
  limit: number
  /** Overrides the configured time limit (a scheduled query's TimeoutMinutes). */
  timeoutMs?: number
}

export interface QueryPage {
  columns: QueryColumn[]
  rows: Array<Record<string, JsonValue>>
  /** Whether rows follow the ones answered. */
  more: boolean
}

/** The farthest a page may start (rows skipped are still computed). */
export const MAX_OFFSET = 1_000_000

/** The SQL DuckDB runs for a request's text: time macros expanded, Snowflake paths rewritten. */
export function toDuckDbSql(sql: string, nowMs: number, prune = true): string {
  return rewriteSnowflakePaths(expandTimeMacros(sql, nowMs, prune))
}

/** Whether a log type's folder holds a stored file yet (read_json refuses a pattern matching none). */
function hasStoredFiles(dir: string): boolean {
  const list = (d: string) => {
    try {
      return fs.readdirSync(d)
    } catch {
      return []
    }
  }
  for (const dt of list(dir).filter((n) => n.startsWith('dt=')))
    for (const hour of list(path.join(dir, dt)).filter((n) => n.startsWith('hour=')))
      if (list(path.join(dir, dt, hour)).some((f) => f.endsWith('.ndjson'))) return true
  return false
}

/** DuckDB's error text as a 400: its message, and the line it names (line breaks survive the rewrites). */
function queryError(err: unknown, rewritten: boolean): RulekeeperError {
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

export class QueryEngine {
  private running = 0
  private readonly waiting: Array<() => void> = []
  private readonly stored = new Set<string>()
  private closed = false
  /** DuckDB's worker threads given `settings.nice` (none where that is not possible). */
  lowPriorityThreads: readonly number[] = []

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly admin: DuckDBConnection,
    private readonly logsRoot: string,
    private readonly logTypes: readonly LogType[],
    readonly settings: QuerySettings,
  ) {}

  static async open(opts: {
    logsRoot: string
    logTypes: readonly LogType[]
    settings: QuerySettings
  }): Promise<QueryEngine> {
    const { settings } = opts
    // libuv's pool exists before the threads are listed, so the threads that appear are DuckDB's.
    await fs.promises.access(opts.logsRoot).catch(() => {})
    const before = threadIds()
    const instance = await DuckDBInstance.create(':memory:', {
      // `settings.threads` workers, plus the thread that waits for them (streamOnWorkers).
      threads: String(settings.threads + 1),
      memory_limit: settings.memoryLimit,
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
      // No spilling to disk: a query past the memory limit fails instead of writing temp files.
      temp_directory: '',
    })
    const lowered = lowerNewThreads(before, threadIds(), settings.threads, settings.nice)
    const admin = await instance.connect()
    const engine = new QueryEngine(instance, admin, opts.logsRoot, opts.logTypes, settings)
    engine.lowPriorityThreads = lowered
    const dirs = opts.logTypes.map((lt) => `${logTypeDir(opts.logsRoot, lt)}${path.sep}`)
    const quoted = dirs.map((d) => `'${d.replaceAll("'", "''")}'`).join(', ')
    await admin.run(`SET TimeZone = 'UTC'`)
    await admin.run(`ATTACH ':memory:' AS panther_logs`)
    await admin.run('CREATE SCHEMA panther_logs.public')
    await admin.run(`SET allowed_directories = [${quoted}]`)
    await admin.run('SET enable_external_access = false')
    await admin.run('SET allow_community_extensions = false')
    await admin.run('SET lock_configuration = true')
    for (const lt of opts.logTypes) await engine.refreshViews(lt)
    return engine
  }

  /** (Re)creates a log type's views: over its files once any is stored, else empty. */
  private async refreshViews(lt: LogType): Promise<void> {
    const has = this.stored.has(lt.name) || hasStoredFiles(logTypeDir(this.logsRoot, lt))
    if (has) this.stored.add(lt.name)
    for (const stmt of tableViews(this.logsRoot, lt, has)) await this.admin.run(stmt)
  }

  private async views(): Promise<void> {
    for (const lt of this.logTypes) if (!this.stored.has(lt.name)) await this.refreshViews(lt)
  }

  private async slot(): Promise<() => void> {
    if (this.closed) throw new RulekeeperError('Unavailable', 'the query engine is closed')
    if (this.running >= this.settings.concurrency) {
      if (this.waiting.length >= this.settings.queue)
        throw new RulekeeperError(
          'Unavailable',
          'too many queries are running; try again shortly',
          {},
          { 'Retry-After': '1' },
        )
      await new Promise<void>((resolve) => this.waiting.push(resolve))
    } else this.running++
    return () => {
      const next = this.waiting.shift()
      if (next) next()
      else this.running--
    }
  }

  /** Runs one read-only query and answers one page of its rows. */
  async run(req: QueryRequest): Promise<QueryPage> {
    if (Buffer.byteLength(req.sql) > this.settings.maxSqlBytes)
      throw new RulekeeperError('PayloadTooLarge', `the SQL is over ${this.settings.maxSqlBytes} bytes`)
    if (req.offset > MAX_OFFSET) throw badRequest(`a page may start at row ${MAX_OFFSET} at most`)
    const release = await this.slot()
    let conn: DuckDBConnection | undefined
    try {
      await this.views()
      conn = await this.instance.connect()
      return await this.execute(conn, req)
    } finally {
      conn?.closeSync()
      release()
    }
  }

  private async prepare(conn: DuckDBConnection, req: QueryRequest) {
    let sql = toDuckDbSql(req.sql, req.nowMs)
    let attempt = 0
    for (;;) {
      try {
        const extracted = await conn.extractStatements(sql)
        if (extracted.count !== 1) throw badRequest(`send one SQL statement (found ${extracted.count})`)
        const prepared = await extracted.prepare(0)
        if (prepared.statementType !== StatementType.SELECT) {
          prepared.destroySync()
          const word = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? 'another'
          throw badRequest(`only SELECT queries may run (this is a ${word} statement)`)
        }
        return prepared
      } catch (err) {
        if (err instanceof RulekeeperError) throw err
        // A macro aliasing a derived table: that table has no p_date/p_hour to prune on.
        if (attempt === 0 && /p_date|p_hour/.test(String(err))) {
          attempt++
          sql = toDuckDbSql(req.sql, req.nowMs, false)
          continue
        }
        throw queryError(err, sql !== req.sql)
      }
    }
  }

  private async execute(conn: DuckDBConnection, req: QueryRequest): Promise<QueryPage> {
    const prepared = await this.prepare(conn, req)
    const timeoutMs = req.timeoutMs ?? this.settings.timeoutMs
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      conn.interrupt()
    }, timeoutMs)
    try {
      const result = await streamOnWorkers(prepared)
      const names = result.deduplicatedColumnNames()
      const types = result.columnTypes()
      const columns = names.map((name, i) => ({ name, type: types[i]!.alias ?? types[i]!.toString() }))
      const isJson = types.map((t) => t.alias === 'JSON')
      const rows: Array<Record<string, JsonValue>> = []
      let skip = req.offset
      let more = false
      for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
        if (skip >= chunk.rowCount) {
          skip -= chunk.rowCount
          continue
        }
        const values = chunk.getRows()
        for (let r = skip; r < values.length; r++) {
          if (rows.length === req.limit) {
            more = true
            break
          }
          const row: Record<string, JsonValue> = {}
          const v = values[r]!
          for (let c = 0; c < names.length; c++) row[names[c]!] = isJson[c] ? jsonColumnValue(v[c]!) : toJson(v[c]!)
          rows.push(row)
        }
        skip = 0
        if (more) break
      }
      return { columns, rows, more }
    } catch (err) {
      if (timedOut)
        throw new RulekeeperError(
          'BadRequest',
          `the query ran past its time limit of ${timeoutMs} ms and was stopped`,
          {
            reason: 'timeout',
          },
        )
      throw queryError(err, true)
    } finally {
      clearTimeout(timer)
      prepared.destroySync()
    }
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    this.admin.closeSync()
    this.instance.closeSync()
  }
}
