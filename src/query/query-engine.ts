// The query engine over the stored events: one embedded DuckDB (in process: DuckDB runs each query
// on its own threads, the JS thread only awaits it), the event tables as views (event-tables.ts),
// and the confinement every query runs under: external access off but for the log types' folders,
// configuration locked, extensions never installed or loaded, one SELECT per request, a time limit
// that interrupts the query, bounded memory and threads; the work runs on DuckDB's own workers at
// a lower priority (background-run.ts, thread-priority.ts); each query is prepared first in the SQL
// checker's own process, bounded in time and memory (engine/sql/sql-check.ts), since DuckDB's
// preparation is neither (docs/queries.md, docs/security.md). The
// signals table (signal-tables.ts) reads detection's match files, remade when their committed lengths move.
// Over a shared events directory (`eachReplica`) the tables read every replica's folder.
import fs from 'node:fs'
import path from 'node:path'
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api'
import { RulekeeperError, badRequest } from '../errors.js'
import type { LogType } from '../ingest/log-type.js'
import { streamOnWorkers } from './background-run.js'
import { lowerNewThreads, threadIds } from './thread-priority.js'
import { type QuerySettings, sizeBytes } from './config.js'
import { logTypeDir, tableViews } from '../engine/sql/event-tables.js'
import { type JsonValue, jsonColumnValue, jsonSize, setColumn, toJson } from './json-values.js'
import { prepareSelect, queryError } from '../engine/sql/prepare-select.js'
import { valueFloor } from './value-floor.js'
import { SqlChecker } from '../engine/sql/sql-check.js'
import { type CommittedOutputs, committedKey, signalViews } from '../engine/sql/signal-tables.js'

const NO_OUTPUTS: CommittedOutputs = {}

/** Detection's output for the signals table: its folder, and the checkpoint's committed lengths now. */
export interface SignalSource {
  detectionsRoot: string
  committed: () => CommittedOutputs
}

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
  /** Waits for a place however many wait (a scheduled run: its slot is recorded, a 503 would lose it). */
  waitForPlace?: boolean
}

/** The longest delay a Node timer takes (longer ones fire at once). */
const MAX_TIMER_MS = 2_147_483_647

export interface QueryPage {
  columns: QueryColumn[]
  rows: Array<Record<string, JsonValue>>
  /** Whether rows follow the ones answered. */
  more: boolean
}

/** The 400 of a result row larger than a page may be. */
function rowTooLarge(row: number, maxBytes: number): RulekeeperError {
  return new RulekeeperError(
    'BadRequest',
    `row ${row} of the result is larger than a page may be (queries.maxPageBytes, ${maxBytes} bytes as JSON): select fewer or smaller columns`,
    { reason: 'row-too-large', row },
  )
}

/** The farthest a page may start (rows skipped are still computed). */
export const MAX_OFFSET = 1_000_000

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

/** The folders of a shared events directory that may hold a replica's events (not hidden, not `_`). */
function replicaDirs(root: string): string[] {
  try {
    return fs
      .readdirSync(root, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.name.startsWith('_') && !e.name.startsWith('.'))
      .map((e) => path.join(root, e.name))
  } catch {
    return []
  }
}

export class QueryEngine {
  /** The stored events are a shared directory's replica folders (`<logsRoot>/<replica>/<log type>/…`). */
  private eachReplica = false
  private running = 0
  private readonly waiting: Array<() => void> = []
  private readonly stored = new Set<string>()
  private closed = false
  /** Connections of the queries running now. */
  private readonly active = new Set<DuckDBConnection>()
  /** DuckDB's worker threads given `settings.nice` (none where that is not possible). */
  lowPriorityThreads: readonly number[] = []
  /** The committed lengths the signals view was last made with (the object, then its key). */
  private signalsSeen: { outputs: CommittedOutputs | null; key: string | null } = { outputs: null, key: null }
  private signalsRefresh: Promise<void> = Promise.resolve()

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly admin: DuckDBConnection,
    private readonly logsRoot: string,
    private readonly logTypes: readonly LogType[],
    readonly settings: QuerySettings,
    private readonly signals: SignalSource | undefined,
    private readonly checker: SqlChecker,
    private readonly ownsChecker: boolean,
  ) {}

  static async open(opts: {
    logsRoot: string
    logTypes: readonly LogType[]
    settings: QuerySettings
    /** Detection's output: the signals table reads its match files (none without it: an empty table). */
    signals?: SignalSource
    /** Where a query is prepared first, bounded (a checker of the engine's own when absent). */
    checker?: SqlChecker
    /** `logsRoot` is a shared events directory: the tables read every replica's folder. */
    eachReplica?: boolean
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
    const engine = new QueryEngine(
      instance,
      admin,
      opts.logsRoot,
      opts.logTypes,
      settings,
      opts.signals,
      opts.checker ??
        new SqlChecker(() => opts.logTypes, {
          prepareTimeoutMs: settings.prepareTimeoutMs,
          prepareMemoryBytes: sizeBytes(settings.prepareMemoryLimit),
        }),
      opts.checker === undefined,
    )
    engine.lowPriorityThreads = lowered
    engine.eachReplica = opts.eachReplica === true
    // A shared directory: its replica folders may appear later, so the whole directory is allowed.
    const dirs = engine.eachReplica
      ? [`${path.resolve(opts.logsRoot)}${path.sep}`]
      : opts.logTypes.map((lt) => `${logTypeDir(opts.logsRoot, lt)}${path.sep}`)
    // The match files only: never the detections folder itself (checkpoint, alert journal, contexts).
    if (opts.signals) dirs.push(`${path.join(opts.signals.detectionsRoot, 'matches')}${path.sep}`)
    const quoted = dirs.map((d) => `'${d.replaceAll("'", "''")}'`).join(', ')
    await admin.run(`SET TimeZone = 'UTC'`)
    await admin.run(`ATTACH ':memory:' AS panther_logs`)
    await admin.run('CREATE SCHEMA panther_logs.public')
    await admin.run(`ATTACH ':memory:' AS panther_signals`)
    await admin.run('CREATE SCHEMA panther_signals.public')
    await admin.run(`SET allowed_directories = [${quoted}]`)
    await admin.run('SET enable_external_access = false')
    await admin.run('SET allow_community_extensions = false')
    await admin.run('SET lock_configuration = true')
    for (const lt of opts.logTypes) await engine.refreshViews(lt)
    await engine.refreshSignals()
    return engine
  }

  /** Remakes the signals views when the committed match files moved (one refresh at a time). */
  private refreshSignals(): Promise<void> {
    const run = this.signalsRefresh.then(async () => {
      const outputs = this.signals?.committed() ?? NO_OUTPUTS
      if (outputs === this.signalsSeen.outputs) return
      const key = committedKey(outputs)
      if (key !== this.signalsSeen.key)
        for (const stmt of signalViews(this.signals?.detectionsRoot ?? '', outputs)) await this.admin.run(stmt)
      this.signalsSeen = { outputs, key }
    })
    this.signalsRefresh = run.catch(() => undefined)
    return run
  }

  /** (Re)creates a log type's views: over its files once any is stored, else empty. */
  private async refreshViews(lt: LogType): Promise<void> {
    const roots = this.eachReplica ? replicaDirs(this.logsRoot) : [this.logsRoot]
    const has = this.stored.has(lt.name) || roots.some((root) => hasStoredFiles(logTypeDir(root, lt)))
    if (has) this.stored.add(lt.name)
    const pattern = this.eachReplica ? path.join(this.logsRoot, '*') : this.logsRoot
    for (const stmt of tableViews(pattern, lt, has)) await this.admin.run(stmt)
  }

  private async views(): Promise<void> {
    for (const lt of this.logTypes) if (!this.stored.has(lt.name)) await this.refreshViews(lt)
    await this.refreshSignals()
  }

  private async slot(waitForPlace = false): Promise<() => void> {
    if (this.closed) throw new RulekeeperError('Unavailable', 'the query engine is closed')
    if (this.running >= this.settings.concurrency) {
      if (this.waiting.length >= this.settings.queue && !waitForPlace)
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
    const release = await this.slot(req.waitForPlace)
    let conn: DuckDBConnection | undefined
    try {
      // Prepared first where its cost is bounded, over the same tables with no file access: what the
      // checker refuses — stopped at a limit, or not binding there — never reaches this engine's own
      // preparation (a query the checker cannot bind could still fold constants here, unbounded).
      const problem = await this.checker.check(req.sql, req.nowMs)
      if (problem) {
        const { message, stopped, ...at } = problem
        throw new RulekeeperError('BadRequest', message, stopped ? { reason: `prepare-${stopped}` } : at)
      }
      await this.views()
      conn = await this.instance.connect()
      this.active.add(conn)
      return await this.execute(conn, req)
    } finally {
      if (conn) this.active.delete(conn)
      conn?.closeSync()
      release()
    }
  }

  /** How many queries are running now (past their place in the queue, connected). */
  get runningNow(): number {
    return this.active.size
  }

  /** Interrupts every query running now (shutdown: a scheduled run does not hold it up). */
  interruptAll(): void {
    for (const conn of this.active) this.interrupt(conn)
  }

  /**
   * Interrupts the connection's query now and every 50 ms until it ends: DuckDB drops an interrupt
   * that lands before the query starts executing (while it is prepared), which left such a query to
   * run to its time limit.
   */
  private interrupt(conn: DuckDBConnection): void {
    conn.interrupt()
    const again = setInterval(() => {
      if (this.active.has(conn)) conn.interrupt()
      else clearInterval(again)
    }, 50)
    again.unref()
  }

  private async execute(conn: DuckDBConnection, req: QueryRequest): Promise<QueryPage> {
    const prepared = await prepareSelect(conn, req.sql, req.nowMs)
    const timeoutMs = Math.min(req.timeoutMs ?? this.settings.timeoutMs, MAX_TIMER_MS)
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      this.interrupt(conn)
    }, timeoutMs)
    try {
      const result = await streamOnWorkers(prepared)
      const names = result.deduplicatedColumnNames()
      const types = result.columnTypes()
      const columns = names.map((name, i) => ({ name, type: types[i]!.alias ?? types[i]!.toString() }))
      const isJson = types.map((t) => t.alias === 'JSON')
      const rows: Array<Record<string, JsonValue>> = []
      const maxBytes = this.settings.maxPageBytes
      let bytes = 2
      let skip = req.offset
      let more = false
      for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
        if (skip >= chunk.rowCount) {
          skip -= chunk.rowCount
          continue
        }
        // Only the page's rows are converted, a column's value at a time (getRows() converts all 2,048).
        const vectors = names.map((_, c) => chunk.getColumnVector(c))
        for (let r = skip; r < chunk.rowCount; r++) {
          if (rows.length === req.limit) {
            more = true
            break
          }
          // The row's least size is read from the vectors first: a row that cannot fit a page is
          // refused before it is converted, and one that cannot fit this page ends it.
          let floor = 2
          for (let c = 0; c < names.length && floor <= maxBytes; c++)
            // A JSON column is answered parsed: its text (whitespace, escapes) may be far longer.
            floor += jsonSize(names[c]!) + 2 + (isJson[c] ? 1 : valueFloor(vectors[c]!, r, maxBytes - floor))
          if (rows.length === 0 && floor > maxBytes) throw rowTooLarge(req.offset, maxBytes)
          if (rows.length > 0 && bytes + floor > maxBytes) {
            more = true
            break
          }
          const row: Record<string, JsonValue> = {}
          let rowBytes = 2
          for (let c = 0; c < names.length; c++) {
            const v = vectors[c]!.getItem(r)
            const value = isJson[c] ? jsonColumnValue(v) : toJson(v)
            setColumn(row, names[c]!, value)
            rowBytes += jsonSize(names[c]!) + 2 + jsonSize(value)
          }
          // A page ends before the row that would take it past maxPageBytes; a row past it alone is refused.
          if (rows.length === 0 && rowBytes > maxBytes) throw rowTooLarge(req.offset, maxBytes)
          if (rows.length > 0 && bytes + rowBytes > maxBytes) {
            more = true
            break
          }
          rows.push(row)
          bytes += rowBytes
        }
        skip = 0
        if (more) break
      }
      // An interrupt can end the stream early without an error: never answer its rows as the result.
      if (timedOut) throw new Error('interrupted')
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
      if (err instanceof RulekeeperError) throw err
      throw queryError(err, true)
    } finally {
      clearTimeout(timer)
      prepared.destroySync()
    }
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    if (this.ownsChecker) void this.checker.close()
    this.admin.closeSync()
    this.instance.closeSync()
  }
}
