// One warm Python worker: a `python3 -I -B rulekeeper_worker.py` process spawned without a shell,
// with an empty environment, in its own process group. It answers one job at a time; the worker
// itself enforces each test's timeout, so the backstop here only fires when the worker is stuck,
// and then the whole group is killed and the job answered as failed.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import type { Logger } from '../../log.js'
import type { HelloMessage, JobMessage, PongMessage, ResultMessage } from './protocol.js'

/** The largest answer line accepted; a worker past it is killed (results are capped in Python). */
const MAX_LINE = 64 * 1024 * 1024
const STDERR_KEEP = 8 * 1024

export class WorkerError extends Error {}

interface Pending {
  id: number
  resolve(message: ResultMessage | PongMessage): void
  reject(err: Error): void
  timer: NodeJS.Timeout
}

export class PythonWorker {
  readonly process: ChildProcessWithoutNullStreams
  hello: HelloMessage | undefined
  /** Set once the process exited or was killed: the pool drops the worker. */
  dead = false
  /** Set when this side killed the worker (close, backstop): its exit is expected. */
  private killed = false
  private buffer = ''
  private stderrTail = ''
  private pending: Pending | undefined
  private ready: Promise<HelloMessage>
  private exit: Promise<void>

  constructor(executable: string, script: string, scratchRoot: string, startTimeoutMs: number, private readonly logger?: Logger) {
    this.process = spawn(executable, ['-I', '-B', script, JSON.stringify({ scratchRoot })], {
      shell: false,
      env: {},
      cwd: scratchRoot,
      detached: true, // its own process group: kill() takes the worker and every child it forked
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    // An idle worker must not keep the server (or a CLI run that forgot close()) alive: the process
    // and its pipes are unref'd; a pending job's backstop timer keeps the loop alive while it runs.
    // A worker left behind exits on its own when its stdin closes with the server.
    this.process.unref()
    for (const stream of [this.process.stdin, this.process.stdout, this.process.stderr]) {
      ;(stream as unknown as { unref?: () => void }).unref?.()
    }
    this.exit = new Promise<void>((resolve) => {
      this.process.once('exit', () => resolve())
      // A spawn that failed (ENOENT, EACCES) never exits: there is no process.
      this.process.once('error', () => this.process.pid === undefined && resolve())
    })
    let onHello: (h: HelloMessage) => void = () => {}
    let onFail: (e: Error) => void = () => {}
    this.ready = new Promise<HelloMessage>((resolve, reject) => {
      onHello = resolve
      onFail = reject
    })
    this.ready.catch(() => {}) // observed by start(); never an unhandled rejection
    const startTimer = setTimeout(() => {
      onFail(new WorkerError(`the Python worker did not start within ${startTimeoutMs} ms`))
      this.kill()
    }, startTimeoutMs)
    this.process.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      this.buffer += chunk
      if (this.buffer.length > MAX_LINE) {
        this.fail(new WorkerError('the Python worker sent an oversized answer'))
        return
      }
      let nl: number
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, nl)
        this.buffer = this.buffer.slice(nl + 1)
        let message: { t?: string; id?: number }
        try {
          message = JSON.parse(line)
        } catch {
          this.fail(new WorkerError('the Python worker sent a malformed answer'))
          return
        }
        if (message.t === 'hello') {
          clearTimeout(startTimer)
          this.hello = message as HelloMessage
          onHello(this.hello)
        } else if (this.pending && message.id === this.pending.id) {
          const p = this.pending
          this.pending = undefined
          clearTimeout(p.timer)
          p.resolve(message as ResultMessage | PongMessage)
        }
      }
    })
    this.process.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_KEEP)
    })
    this.process.stdin.on('error', () => {}) // EPIPE after a crash: reported through 'exit'
    this.process.on('error', (err) => {
      clearTimeout(startTimer)
      onFail(new WorkerError(`the Python worker could not be started: ${err.message}`))
      this.fail(err)
    })
    this.process.on('exit', (code, signal) => {
      clearTimeout(startTimer)
      this.dead = true
      const why = signal ? `was killed by ${signal}` : `exited with code ${code}`
      const tail = this.stderrTail.trim()
      const err = new WorkerError(`the Python worker ${why}${tail ? `: ${tail.slice(-2000)}` : ''}`)
      if (!this.killed) this.logger?.warn({ pid: this.process.pid, code, signal, stderr: tail.slice(-2000) }, 'python worker exited')
      onFail(err)
      this.fail(err)
    })
  }

  /** Resolves once the worker said hello (its interpreter version and isolation). */
  start(): Promise<HelloMessage> {
    return this.ready
  }

  get busy(): boolean {
    return this.pending !== undefined
  }

  /** Sends one job; rejects with a WorkerError when the worker dies or passes the backstop. */
  request(message: JobMessage, backstopMs: number): Promise<ResultMessage | PongMessage> {
    if (this.dead) return Promise.reject(new WorkerError('the Python worker is not running'))
    if (this.pending) return Promise.reject(new WorkerError('the Python worker is busy'))
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.logger?.warn({ pid: this.process.pid }, 'python worker passed its backstop; killing it')
        this.fail(new WorkerError(`the Python worker did not answer within ${backstopMs} ms and was killed`))
      }, backstopMs)
      this.pending = { id: message.id, resolve, reject, timer }
      this.process.stdin.write(JSON.stringify(message) + '\n')
    })
  }

  private fail(err: Error): void {
    const p = this.pending
    this.pending = undefined
    if (p) {
      clearTimeout(p.timer)
      p.reject(err)
    }
    this.kill()
  }

  /** Kills the worker's whole process group (idempotent). */
  kill(): void {
    this.dead = true
    this.killed = true
    const pid = this.process.pid
    if (pid === undefined) return
    this.process.ref() // whoever awaits exited() (close()) must see the exit before Node may quit
    try {
      process.kill(-pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }

  /** Resolves when the process has exited (after kill()). */
  exited(): Promise<void> {
    return this.exit
  }
}
