// The check of SQL before it is prepared anywhere else: in a process of its own (sql-check-process.ts),
// bound by DuckDB against empty views of the log-type tables and the signals table, without running.
// DuckDB folds constant expressions while it prepares, outside its memory limit and deaf to interrupts
// (`SELECT len(range(0, 20000000))` took 8 s and 2.3 GB), so the check is bounded from here: killed past
// `prepareTimeoutMs`, or when its resident memory grows past `prepareMemoryBytes`, and a crash of it is an
// answer too. Query files are checked when read (engine/sql/index.ts); every query checks here first
// (query-engine.ts). One process per checker, started on the first check, started again after a kill.
import type { ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import type { LogType } from '../../ingest/log-type.js'
import { forkModule } from '../../module-worker.js'
import { tableViews } from './event-tables.js'
import { signalViews } from './signal-tables.js'
import type { CheckReply, CheckRequest, SqlProblem } from './sql-check-protocol.js'

export type { SqlProblem } from './sql-check-protocol.js'

export interface SqlCheckLimits {
  /** A preparation running longer is stopped (its process killed). */
  prepareTimeoutMs: number
  /** A preparation whose process grows by more resident memory is stopped (Linux; elsewhere time only). */
  prepareMemoryBytes: number
}

export const DEFAULT_SQL_CHECK_LIMITS: SqlCheckLimits = { prepareTimeoutMs: 2000, prepareMemoryBytes: 256 * 2 ** 20 }

/** How often the process's memory is looked at during a check (ms). */
const WATCH_MS = 5
/** A process that does not get ready (DuckDB opened, tables made) within this is given up on. */
const START_TIMEOUT_MS = 60_000

/** Resident memory of a process (bytes), or undefined where /proc does not tell. */
function residentBytes(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) * 1024 : undefined
  } catch {
    return undefined
  }
}

const mib = (n: number) => `${Math.round(n / 2 ** 20)} MiB`

interface Running {
  child: ChildProcess
  ready: Promise<void>
  /** The answer of the check under way, by id. */
  waiting: Map<number, (reply: Extract<CheckReply, { type: 'checked' }>) => void>
  exited: Promise<void>
  /** Its resident memory once ready: every check is measured against it, not against the last. */
  baseline?: number
}

export class SqlChecker {
  private running: Running | undefined
  /** One check at a time on the one process. */
  private chain: Promise<unknown> = Promise.resolve()
  private nextId = 1
  private closed = false
  /** How many checks were stopped at a limit (time, memory) or by a crash (tests, status). */
  stoppedChecks = 0

  constructor(
    private readonly logTypes: () => readonly LogType[],
    private readonly limits: SqlCheckLimits = DEFAULT_SQL_CHECK_LIMITS,
  ) {}

  /** The statements that make the empty tables (the checking process runs them once). */
  private setup(): string[] {
    const out = [`SET TimeZone = 'UTC'`, `ATTACH ':memory:' AS panther_logs`, 'CREATE SCHEMA panther_logs.public']
    for (const lt of this.logTypes()) out.push(...tableViews('', lt, false))
    out.push(`ATTACH ':memory:' AS panther_signals`, 'CREATE SCHEMA panther_signals.public')
    out.push(...signalViews('', {}))
    return out
  }

  private start(): Running {
    // Before the fork: statements that cannot be made leave no process behind.
    const setup = this.setup()
    const child = forkModule(import.meta.url, 'sql-check-process')
    const waiting = new Map<number, (reply: Extract<CheckReply, { type: 'checked' }>) => void>()
    let onReady: () => void = () => {}
    let onFail: (err: Error) => void = () => {}
    const ready = new Promise<void>((resolve, reject) => {
      onReady = resolve
      onFail = reject
    })
    ready.catch(() => {})
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    let stderr = ''
    child.stderr?.on('data', (d: Buffer) => {
      if (stderr.length < 4096) stderr += d.toString('utf8')
    })
    child.on('message', (reply: CheckReply) => {
      if (reply.type === 'ready') onReady()
      else waiting.get(reply.id)?.(reply)
    })
    child.once('exit', (code, signal) => {
      if (this.running?.child === child) this.running = undefined
      // A check under way that the process did not answer: preparing it ended the process.
      for (const answer of waiting.values())
        answer({
          type: 'checked',
          id: -1,
          problem: {
            message: 'preparing the query ended the process that checks it; it was not run',
            stopped: 'crash',
          },
        })
      onFail(new Error(`the SQL check process ended (${code ?? signal}) before it was ready: ${stderr.trim()}`))
    })
    child.on('error', (err) => onFail(err))
    child.send({ type: 'setup', setup } satisfies CheckRequest)
    // Idle, the process keeps nothing alive (nor does its stderr pipe); a check under way holds its
    // own timers.
    child.unref()
    child.channel?.unref()
    ;(child.stderr as { unref?: () => void } | null)?.unref?.()
    return { child, ready, waiting, exited }
  }

  private async process(): Promise<Running> {
    if (this.closed) throw new Error('the SQL checker is closed')
    this.running ??= this.start()
    const running = this.running
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('the SQL check process did not start in time')), START_TIMEOUT_MS)
    })
    try {
      await Promise.race([running.ready, late])
    } catch (err) {
      running.child.kill('SIGKILL')
      throw err
    } finally {
      clearTimeout(timer)
    }
    return running
  }

  /** The problem of `sql` (undefined: it binds, as one SELECT), its macros relative to `nowMs`. */
  check(sql: string, nowMs = Date.now()): Promise<SqlProblem | undefined> {
    const run = this.chain.then(() => this.checkNow(sql, nowMs))
    this.chain = run.catch(() => undefined)
    return run
  }

  private async checkNow(sql: string, nowMs: number): Promise<SqlProblem | undefined> {
    const running = await this.process()
    const { child } = running
    const pid = child.pid ?? -1
    const id = this.nextId++
    running.baseline ??= residentBytes(pid)
    const baseline = running.baseline
    const { prepareTimeoutMs, prepareMemoryBytes } = this.limits
    let timer: NodeJS.Timeout | undefined
    let watch: NodeJS.Timeout | undefined
    const stop = (problem: SqlProblem, resolve: (p: SqlProblem) => void) => {
      this.stoppedChecks++
      child.kill('SIGKILL')
      if (this.running?.child === child) this.running = undefined
      resolve(problem)
    }
    try {
      return await new Promise<SqlProblem | undefined>((resolve) => {
        running.waiting.set(id, (reply) => resolve(reply.problem))
        timer = setTimeout(
          () =>
            stop(
              {
                message: `preparing the query took longer than ${prepareTimeoutMs} ms (DuckDB evaluates constant expressions while it prepares); it was stopped`,
                stopped: 'time',
              },
              resolve,
            ),
          prepareTimeoutMs,
        )
        if (baseline !== undefined)
          watch = setInterval(() => {
            const now = residentBytes(pid)
            if (now !== undefined && now - baseline > prepareMemoryBytes)
              stop(
                {
                  message: `preparing the query needed more than ${mib(prepareMemoryBytes)} of memory (DuckDB evaluates constant expressions while it prepares); it was stopped`,
                  stopped: 'memory',
                },
                resolve,
              )
          }, WATCH_MS)
        child.send({ type: 'check', id, sql, nowMs } satisfies CheckRequest)
      }).then((problem) => {
        if (problem?.stopped === 'crash') this.stoppedChecks++
        // The allocator keeps freed pages: a process left much larger than it started is replaced,
        // so checks cannot ratchet it up one limit at a time.
        const now = residentBytes(pid)
        if (
          this.running?.child === child &&
          baseline !== undefined &&
          now !== undefined &&
          now - baseline > prepareMemoryBytes / 2
        ) {
          child.kill('SIGKILL')
          this.running = undefined
        }
        return problem
      })
    } finally {
      running.waiting.delete(id)
      clearTimeout(timer)
      clearInterval(watch)
    }
  }

  /** The checking process's pid while one runs. */
  processId(): number | undefined {
    return this.running?.child.pid
  }

  async close(): Promise<void> {
    this.closed = true
    const running = this.running
    this.running = undefined
    if (!running) return
    // Held until it is gone (idle, it was unref'd: the exit would not be waited for).
    running.child.ref()
    running.child.kill('SIGKILL')
    await running.exited
  }
}
