// A real `rulekeeper serve` in a child process (test/helpers/serve-entry.ts) on a loopback port the
// kernel chose (port 0, reported by the child: a port picked here and freed could be taken by another
// test's server before the child binds it, and its /healthz would answer for the child), for tests that must SIGKILL the server: startChild({ dataDir, env }) resolves once
// GET /healthz answers 200; kill() is SIGKILL, stop() is SIGTERM (then SIGKILL after a grace).
// Every child still alive when the test process exits is killed, whatever happened.
import { spawn, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import { LISTENING_MARK } from './listening-mark.js'

const ENTRY = path.join(import.meta.dirname, 'serve-entry.ts')
const live = new Set<ChildProcess>()
process.on('exit', () => {
  for (const c of live) c.kill('SIGKILL')
})

export interface ChildServer {
  url: string
  pid: number
  /** Milliseconds from spawn to the first 200 from /healthz. */
  startMs: number
  /** SIGKILL; resolves once the process is gone. */
  kill(): Promise<void>
  /** SIGTERM (a clean stop); SIGKILL after `graceMs`. Resolves with the exit code or signal. */
  stop(graceMs?: number): Promise<number | string | null>
  /** The last few KB of the child's stdout and stderr (for failure messages). */
  output(): string
  /** Everything the child wrote to stdout so far (up to 8 MiB). */
  stdout(): string
}

export interface StartChildOptions {
  dataDir: string
  env?: Record<string, string>
  /** Give up (and kill the child) when /healthz has not answered 200 by then. Default 60 s (a first start on a loaded machine). */
  timeoutMs?: number
  /** Root only: run the server as this uid/gid (an ordinary user). */
  uid?: number
  gid?: number
  /** A command the server is started under (e.g. a bwrap that forbids user namespaces). */
  wrap?: string[]
}

/**
 * The test's environment without tap's process tracking and V8 coverage: a server that is killed
 * never writes its coverage anyway, and the hooks slow every one of the many starts.
 */
function childEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env }
  delete env.NODE_V8_COVERAGE
  for (const k of Object.keys(env)) if (k.startsWith('_TAPJS_PROCESSINFO')) delete env[k]
  const opts = (env.NODE_OPTIONS ?? '').split(/\s+/).filter((o) => o !== '' && !o.includes('@tapjs'))
  if (opts.length > 0) env.NODE_OPTIONS = opts.join(' ')
  else delete env.NODE_OPTIONS
  return env
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once('exit', () => resolve())
  })
}

async function spawnOnce(opts: StartChildOptions): Promise<ChildServer> {
  const started = Date.now()
  // The node flags `npm start` and the `rulekeeper` command run the server with (bin/rulekeeper.js).
  const argv = [...(opts.wrap ?? []), process.execPath, '--max-semi-space-size=64', '--import', 'tsx', ENTRY]
  const child = spawn(argv[0]!, argv.slice(1), {
    ...(opts.uid !== undefined ? { uid: opts.uid, gid: opts.gid ?? opts.uid } : {}),
    env: {
      ...childEnv(),
      RULEKEEPER_LOG_LEVEL: 'warn',
      ...opts.env,
      RULEKEEPER_DATA_DIR: opts.dataDir,
      RULEKEEPER_HOST: '127.0.0.1',
      RULEKEEPER_PORT: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  live.add(child)
  child.once('exit', () => live.delete(child))
  let out = ''
  const keep = (c: Buffer) => {
    out = (out + c.toString()).slice(-8192)
  }
  const stdout: Buffer[] = []
  let stdoutBytes = 0
  child.stdout?.on('data', (c: Buffer) => {
    stdoutBytes += c.length
    if (stdoutBytes <= 8 << 20) stdout.push(c)
  })
  child.stdout?.on('data', keep)
  child.stderr!.on('data', keep)
  // The port the child bound (port 0: the kernel's choice), from its LISTENING_MARK line on stderr.
  let url: string | undefined
  let errText = ''
  const onErr = (c: Buffer) => {
    errText = (errText + c.toString()).slice(-4096)
    const m = new RegExp(`${LISTENING_MARK}(\\d+)\\n`).exec(errText)
    if (m) {
      url = `http://127.0.0.1:${m[1]}`
      child.stderr!.off('data', onErr)
    }
  }
  child.stderr!.on('data', onErr)
  const gone = exited(child)
  const kill = async () => {
    child.kill('SIGKILL')
    await gone
  }
  const deadline = started + (opts.timeoutMs ?? 60_000)
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw Object.assign(
        new Error(`rulekeeper serve exited (${child.exitCode ?? child.signalCode}) before /healthz answered:\n${out}`),
        { output: out },
      )
    }
    if (Date.now() > deadline) {
      await kill()
      throw new Error(`rulekeeper serve did not answer /healthz within ${opts.timeoutMs ?? 60_000} ms:\n${out}`)
    }
    if (url === undefined) {
      await new Promise((r) => setTimeout(r, 25)) // wait: poll interval of a wait on a condition
      continue
    }
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) })
      await res.arrayBuffer()
      if (res.status === 200) break
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 25)) // wait: poll interval of a wait on a condition
  }
  return {
    url: url!,
    pid: child.pid!,
    startMs: Date.now() - started,
    kill,
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode ?? child.signalCode
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
      await gone
      clearTimeout(timer)
      return child.exitCode ?? child.signalCode
    },
    output: () => out,
    stdout: () => Buffer.concat(stdout).toString('utf8'),
  }
}

/** Starts `rulekeeper serve` on `dataDir`, on a loopback port the kernel chose. */
export function startChild(opts: StartChildOptions): Promise<ChildServer> {
  return spawnOnce(opts)
}
