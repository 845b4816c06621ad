// One sandboxed Python process: started ahead of time as a spare (bwrap → interpreter → the runner,
// which loads the runtime and says hello on fd 3), then given exactly one job. This side enforces
// what the process itself must not be trusted with: the wall clock of each test (and of a detection
// run's whole batch), the output cap on fd 1 and 2, the size and shape of what arrives on fd 3, and
// the end of the run (the process is killed at `done`; nothing it writes afterwards is read). A malformed protocol line stops this run
// only. The exit status is bwrap's, which passes the interpreter's on (128 + signal when killed).
import { spawn, type ChildProcess } from 'node:child_process'
import type { Readable, Writable } from 'node:stream'
import { parseLine, wellFormed } from './frame-check.js'
import { type Job, RUN_BUDGET_SPENT, type RunLimits, type RunnerHello, type TestRecord } from './protocol.js'

const STREAM_KEEP = 16 * 1024
const RESULT_LIMIT = 4 * 1024 * 1024
/** A detection run's results, all records together (RESULT_LIMIT bounds each record's share). */
export const DETECT_RESULT_LIMIT = 64 * 1024 * 1024
/**
 * One detection result line (`r`), in UTF-16 units: the runtime replaces a line past 64 Ki characters
 * (rulekeeper_runtime.py MAX_OUTPUT_BYTES) by a short error, and a character is at most two units. A
 * longer one was written by rule code itself and stops the run (it would be stored with the alert).
 */
export const DETECT_RECORD_LINE_LIMIT = 2 * 64 * 1024
const STDERR_BEFORE_HELLO = 8 * 1024

export class SandboxStartError extends Error {}

export interface SandboxSpawn {
  command: string
  args: string[]
  /** The seccomp program bwrap reads from fd 4. */
  seccomp: Buffer
}

/** Signals by number (Linux), for messages. */
const SIGNALS: Record<number, string> = {
  1: 'SIGHUP',
  2: 'SIGINT',
  3: 'SIGQUIT',
  4: 'SIGILL',
  6: 'SIGABRT',
  7: 'SIGBUS',
  8: 'SIGFPE',
  9: 'SIGKILL',
  11: 'SIGSEGV',
  13: 'SIGPIPE',
  14: 'SIGALRM',
  15: 'SIGTERM',
  24: 'SIGXCPU',
  25: 'SIGXFSZ',
  31: 'SIGSYS',
}

export function describeExit(
  code: number | null,
  signal: NodeJS.Signals | null,
  limits: Pick<RunLimits, 'cpuSeconds'>,
): string {
  const signo = signal ? null : code !== null && code > 128 && code < 160 ? code - 128 : null
  const name = signal ?? (signo !== null ? (SIGNALS[signo] ?? `signal ${signo}`) : null)
  if (name === 'SIGXCPU') return `exceeded the CPU time limit of ${limits.cpuSeconds} s`
  if (name === 'SIGSEGV') return 'crashed the Python interpreter (SIGSEGV, segmentation fault)'
  if (name === 'SIGKILL') return 'was killed (SIGKILL; out of memory?)'
  if (name === 'SIGSYS') return 'made a system call the sandbox forbids (SIGSYS)'
  if (name) return `was terminated by ${name}`
  return `exited with code ${code} before finishing (os._exit or a fatal interpreter error)`
}

export class SandboxRun {
  readonly process: ChildProcess
  hello: RunnerHello | undefined
  dead = false
  private readonly ready: Promise<RunnerHello>
  private readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  private protocol = ''
  private protocolBytes = 0
  private stderrEarly = ''
  private onLine: ((line: string) => void) | undefined
  private onOverflow: (() => void) | undefined
  private onOutput: ((key: 'stdout' | 'stderr', chunk: string) => void) | undefined

  constructor(spec: SandboxSpawn, startTimeoutMs: number) {
    this.process = spawn(spec.command, spec.args, {
      shell: false,
      env: {},
      detached: true, // its own process group: kill() takes bwrap, and with it the whole pid namespace
      stdio: ['pipe', 'pipe', 'pipe', 'pipe', 'pipe'],
    })
    // An idle spare must not keep the server (or a CLI run) alive; a running job's timer does.
    this.process.unref()
    for (const s of this.process.stdio) (s as unknown as { unref?: () => void } | null)?.unref?.()
    const [stdin, stdout, stderr, proto, seccomp] = this.process.stdio as [
      Writable,
      Readable,
      Readable,
      Readable,
      Writable,
    ]
    stdin.on('error', () => {})
    seccomp.on('error', () => {})
    seccomp.end(spec.seccomp)
    this.exit = new Promise((resolve) => {
      // 'close', not 'exit': the runner writes `done` and exits at once, and 'exit' can come before
      // the last bytes of fd 3 are read; 'close' comes after every pipe of the sandbox has ended.
      this.process.once('close', (code, signal) => {
        this.dead = true
        resolve({ code, signal })
      })
      this.process.once('error', () => {
        this.dead = true
        if (this.process.pid === undefined) resolve({ code: null, signal: null })
      })
    })
    let helloResolve: (h: RunnerHello) => void = () => {}
    let helloReject: (e: Error) => void = () => {}
    this.ready = new Promise((resolve, reject) => {
      helloResolve = resolve
      helloReject = reject
    })
    this.ready.catch(() => {})
    const startTimer = setTimeout(() => {
      helloReject(new SandboxStartError(`the Python sandbox did not start within ${startTimeoutMs} ms`))
      this.kill()
    }, startTimeoutMs)
    this.process.once('error', (err) => {
      clearTimeout(startTimer)
      helloReject(new SandboxStartError(`the Python sandbox could not be started (${spec.command}): ${err.message}`))
    })
    void this.exit.then(({ code, signal }) => {
      clearTimeout(startTimer)
      if (!this.hello) {
        const why = signal ? `was killed by ${signal}` : `exited with code ${code}`
        helloReject(
          new SandboxStartError(
            `the Python sandbox ${why} before it was ready: ${this.stderrEarly.trim().slice(-2000) || 'no message'}`,
          ),
        )
      }
    })
    proto.setEncoding('utf8').on('data', (chunk: string) => {
      this.protocolBytes += chunk.length
      this.protocol += chunk
      let nl: number
      while ((nl = this.protocol.indexOf('\n')) >= 0) {
        const line = this.protocol.slice(0, nl)
        this.protocol = this.protocol.slice(nl + 1)
        if (!this.hello) {
          const hello = parseLine(line) as RunnerHello | undefined
          if (hello?.t !== 'hello') {
            helloReject(new SandboxStartError('the Python sandbox sent a malformed hello'))
            this.kill()
            return
          }
          clearTimeout(startTimer)
          this.hello = hello
          helloResolve(hello)
        } else if (this.onLine) this.onLine(line)
        else this.kill() // nothing may speak between hello and the job
      }
      if (this.protocolBytes > RESULT_LIMIT) this.onOverflow?.()
    })
    stdout.setEncoding('utf8').on('data', (chunk: string) => this.onOutput?.('stdout', chunk))
    stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (!this.hello) this.stderrEarly = (this.stderrEarly + chunk).slice(-STDERR_BEFORE_HELLO)
      this.onOutput?.('stderr', chunk)
    })
  }

  /** Resolves once the runner is loaded and waiting for its job. */
  start(): Promise<RunnerHello> {
    return this.ready
  }

  /**
   * Runs the job's tests and appends one record per test reached to `records` (empty: indexes
   * count from this process's first test); returns
   * when the run finished or was stopped (timeout, output cap, crash, malformed message, `signal`),
   * the last record saying why. The process is dead afterwards either way.
   */
  async run(job: Job, records: TestRecord[], signal?: AbortSignal): Promise<void> {
    const limits = job.limits
    const stdin = this.process.stdio[0] as Writable
    this.hold()
    let current: (TestRecord & { started?: number }) | undefined
    // Each test marker restarts the wall clock: markers past the job's own tests would let rule code
    // (which can write fd 3) keep its run, and a pool slot, alive for as long as it likes.
    const markers =
      job.op === 'test' || job.op === 'detect' || job.op === 'modules' ? job.tests.length : job.op === 'check' ? 1 : 0
    // Detection and module-check runs report per record or module: the result bound applies to each one's share.
    const perMarker = job.op === 'detect' || job.op === 'modules'
    let outputLeft = limits.outputBytes
    let failure: { status: TestRecord['status']; message: string } | undefined
    let done = false
    let finish: () => void = () => {}
    const finished = new Promise<void>((resolve) => (finish = resolve))
    const stop = (status: TestRecord['status'], message: string) => {
      if (!failure && !done) failure = { status, message }
      finish()
    }
    // The wall clock of the current test ends at `deadline`; a marker moves it without touching the
    // timer (a detection run has one marker per record), which re-arms itself when it fires early.
    // A detection run's whole wall clock (`runMs`) caps every record's deadline.
    const runEnd = limits.runMs === undefined ? Number.POSITIVE_INFINITY : performance.now() + limits.runMs
    let deadline = Math.min(performance.now() + limits.timeoutMs, runEnd)
    const expire = () => {
      const now = performance.now()
      const left = deadline - now
      if (left > 0) timer = setTimeout(expire, left + 1)
      else if (now >= runEnd) stop('timeout', `${RUN_BUDGET_SPENT} (${limits.runMs} ms)`)
      else stop('timeout', `timed out after ${limits.timeoutMs} ms (wall clock)`)
    }
    let timer = setTimeout(expire, deadline - performance.now())
    const onAbort = () => stop('timeout', `not run to the end: ${abortReason(signal!)}`)
    signal?.addEventListener('abort', onAbort, { once: true })
    if (signal?.aborted) onAbort()
    this.onOutput = (key, chunk) => {
      outputLeft -= Buffer.byteLength(chunk)
      if (current && current[key].length < STREAM_KEEP)
        current[key] += chunk.slice(0, STREAM_KEEP - current[key].length)
      if (outputLeft < 0)
        stop('output-limit', `printed more than ${limits.outputBytes} bytes to stdout/stderr (the output limit)`)
    }
    this.onOverflow = () => stop('crashed', `reported more than ${RESULT_LIMIT} bytes of results`)
    let detectBytes = 0
    this.onLine = (line) => {
      if (done || failure) return
      if (perMarker && (detectBytes += line.length) > DETECT_RESULT_LIMIT)
        return stop('crashed', `reported more than ${DETECT_RESULT_LIMIT} bytes of results`)
      const event = parseLine(line)
      if (!event || typeof event.t !== 'string')
        return stop('crashed', 'sent a malformed message to the server (the run was stopped)')
      if (perMarker && event.t === 'r' && line.length > DETECT_RECORD_LINE_LIMIT)
        return stop(
          'crashed',
          `reported a result line longer than ${DETECT_RECORD_LINE_LIMIT} characters (the run was stopped)`,
        )
      if (event.t === 'test') {
        if (typeof event.i !== 'number' || event.i !== records.length || event.i >= markers) {
          return stop('crashed', 'sent an out-of-order test marker (the run was stopped)')
        }
        current = {
          i: event.i,
          status: 'ok',
          message: null,
          events: [],
          stdout: '',
          stderr: '',
          started: performance.now(),
        }
        records.push(current)
        if (perMarker) this.protocolBytes = 0
        deadline = Math.min(current.started! + limits.timeoutMs, runEnd)
      } else if (event.t === 'done') {
        done = true
        finish()
      } else if (event.t === 'internal') {
        stop('internal', typeof event.message === 'string' ? event.message : 'the runner failed')
      } else if (current) {
        if (!wellFormed(event)) return stop('crashed', 'sent a malformed message to the server (the run was stopped)')
        current.events.push(event as unknown as TestRecord['events'][number])
        if (event.t === 'end' && current.started !== undefined) {
          current.ms = Math.round((performance.now() - current.started) * 1000) / 1000
          delete current.started
        }
      } else return stop('crashed', 'sent a message before its first test (the run was stopped)')
    }
    void this.exit.then(() => finish())
    stdin.end(jobLine(job))
    await finished
    clearTimeout(timer)
    signal?.removeEventListener('abort', onAbort)
    this.onLine = undefined
    this.onOverflow = undefined
    this.onOutput = undefined
    const exitedBeforeDone = !done && !failure
    this.kill()
    const status = await this.exit
    if (exitedBeforeDone) failure = { status: 'crashed', message: describeExit(status.code, status.signal, limits) }
    if (failure) {
      if (!current || current.events.some((e) => e.t === 'end')) {
        current = { i: records.length, status: 'ok', message: null, events: [], stdout: '', stderr: '' }
        records.push(current)
      }
      delete current.started
      current.status = failure.status
      current.message = failure.message
    }
  }

  /**
   * A warm detection worker (warm-worker.ts): hands the started process its `serve` job and from then
   * on every protocol line to `on.line` (the result bound applies to each line), fd 1/2 output to
   * `on.output`; returns how to write the next batch line. The caller enforces the clocks and kills.
   */
  attach(
    job: Job,
    on: { line(line: string): void; output(bytes: number): void; overflow(): void },
  ): (line: string) => void {
    const stdin = this.process.stdio[0] as Writable
    this.hold()
    this.onLine = (line) => {
      this.protocolBytes = 0
      on.line(line)
    }
    this.onOverflow = () => on.overflow()
    this.onOutput = (_key, chunk) => on.output(Buffer.byteLength(chunk))
    stdin.write(`${JSON.stringify(job)}\n`)
    return (line) => {
      if (!this.dead) stdin.write(line)
    }
  }

  /** Kills the sandbox (idempotent): bwrap's group; its pid namespace dies with it. */
  kill(): void {
    const pid = this.process.pid
    if (pid === undefined || this.killed) return
    this.killed = true
    this.hold() // whoever awaits exited() must see the end (all pipes closed) before Node may quit
    try {
      process.kill(-pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
  private killed = false

  /** Keeps the event loop alive for this process and its pipes (a job runs, or it is being killed). */
  private hold(): void {
    this.process.ref()
    for (const s of this.process.stdio) (s as unknown as { ref?: () => void } | null)?.ref?.()
  }

  /** How the process ended (bwrap's exit code, or the signal that killed it). */
  exitStatus(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    return this.exit
  }

  exited(): Promise<void> {
    return this.exit.then(() => undefined)
  }
}

/** The job as one JSON line; a detection job's `events` text goes in as the array it is. */
function jobLine(job: Job): string {
  if (job.op !== 'detect') return `${JSON.stringify(job)}\n`
  const { events, ...rest } = job
  return `{"events":${events},${JSON.stringify(rest).slice(1)}\n`
}

/** Why an AbortSignal fired, in words (its reason's message). */
export function abortReason(signal: AbortSignal): string {
  const r: unknown = signal.reason
  return r instanceof Error ? r.message : typeof r === 'string' ? r : 'cancelled'
}
