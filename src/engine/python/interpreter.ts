// Finding the Python interpreter: `python.command` is resolved on the server's own PATH, then asked
// once for its real executable and version. Workers are spawned with that absolute path and an empty
// environment, so the empty environment cannot change which interpreter runs (a pyenv shim, for one,
// is a shell script that needs PATH and PYENV_*; the probe runs through it, the workers never do).
import { spawn } from 'node:child_process'
import { accessSync, constants, statSync } from 'node:fs'
import { delimiter, isAbsolute, join, resolve } from 'node:path'
import { unavailable } from '../../errors.js'

export interface Interpreter {
  /** The configured command, as written. */
  command: string
  /** Where it was found on PATH. */
  resolved: string
  /** The interpreter's own `sys.executable`: what workers run. */
  executable: string
  version: string
  /** What the sandbox must mount for it: the four prefixes, then `sys.path` (absolute, as reported). */
  paths: string[]
}

/** The server's environment: where PATH comes from (main.ts passes it; it is never given to workers). */
export type ServerEnv = Readonly<Record<string, string | undefined>>

const MIN_VERSION = [3, 9]
const PROBE_TIMEOUT_MS = 10_000
const PROBE =
  'import sys, json; print(json.dumps([sys.executable, list(sys.version_info[:3]), ' +
  '[sys.base_prefix, sys.prefix, sys.base_exec_prefix, sys.exec_prefix] + [p for p in sys.path if p]]))'

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK)
    return statSync(path).isFile()
  } catch {
    return false
  }
}

/** The command's absolute path, looked up like execvp would (no shell). */
export function resolveCommand(command: string, pathVar: string): string {
  if (command.includes('/')) {
    const abs = isAbsolute(command) ? command : resolve(command)
    if (isExecutableFile(abs)) return abs
    throw unavailable(`Python tests cannot run: python.command '${command}' is not an executable file`)
  }
  for (const dir of pathVar.split(delimiter)) {
    if (!dir) continue
    const candidate = join(dir, command)
    if (isExecutableFile(candidate)) return candidate
  }
  throw unavailable(
    `Python tests cannot run: python.command '${command}' was not found on the server's PATH ` +
      '(install Python 3.9 or later, or set python.command)',
  )
}

/** The environment of the probe only: what wrapper scripts such as pyenv shims need, no secrets. */
function probeEnv(serverEnv: ServerEnv): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(serverEnv)) {
    if (value === undefined) continue
    if (key === 'PATH' || key === 'HOME' || key.startsWith('PYENV')) env[key] = value
  }
  return env
}

/** Resolves and probes the interpreter; rejects with a 503 RulekeeperError when it is unusable. */
export async function probeInterpreter(command: string, serverEnv: ServerEnv): Promise<Interpreter> {
  const resolved = resolveCommand(command, serverEnv.PATH ?? '')
  return await new Promise((resolvePromise, reject) => {
    const child = spawn(resolved, ['-I', '-c', PROBE], {
      shell: false,
      env: probeEnv(serverEnv),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    const timer = setTimeout(() => child.kill('SIGKILL'), PROBE_TIMEOUT_MS)
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d.slice(0, 4096)))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d.slice(0, 4096)))
    child.on('error', (e) => {
      clearTimeout(timer)
      reject(unavailable(`Python tests cannot run: starting '${resolved}' failed: ${e.message}`))
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      let parsed: [string, number[], string[]?] | undefined
      try {
        parsed = JSON.parse(out.trim().split('\n').pop() ?? '') as [string, number[], string[]?]
      } catch {
        parsed = undefined
      }
      if (code !== 0 || !parsed || !Array.isArray(parsed[1])) {
        const why = signal ? `was killed by ${signal}` : `exited with code ${code}`
        reject(
          unavailable(
            `Python tests cannot run: '${resolved}' ${why} when asked for its version: ${err.trim() || out.trim()}`,
          ),
        )
        return
      }
      const [major = 0, minor = 0, micro = 0] = parsed[1]
      const version = `${major}.${minor}.${micro}`
      if (major < MIN_VERSION[0]! || (major === MIN_VERSION[0] && minor < MIN_VERSION[1]!)) {
        reject(unavailable(`Python tests cannot run: '${resolved}' is Python ${version}; 3.9 or later is needed`))
        return
      }
      const paths = Array.isArray(parsed[2]) ? parsed[2].filter((p): p is string => typeof p === 'string') : []
      resolvePromise({ command, resolved, executable: parsed[0] || resolved, version, paths })
    })
  })
}
