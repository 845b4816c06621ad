// The runner's Python files, compiled once per pool. Every sandboxed run starts a fresh interpreter
// with -B (it writes nothing) and the package's `python/` folder read-only, so without bytecode
// beside the sources each run compiled the runtime (rulekeeper_runtime.py, panther_core, the caching
// helpers: ~40 KB) again: about 10 ms of CPU per rule run, the largest avoidable share of its start.
// Here the pool copies those .py files into a private temporary folder, has the same interpreter
// compile them there (our own files, never rule code: the same trust as the version probe), and
// mounts that folder read-only at the same place instead. Anything going wrong keeps the package
// folder: slower, never unconfined. close() removes the folder.
import { spawn } from 'node:child_process'
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { RUNTIME_DIR } from '../../sandbox/bubblewrap.js'

const COMPILE_TIMEOUT_MS = 15_000

export interface CompiledRuntime {
  /** The folder to mount at RUNTIME_DIR: the compiled copy, or `source` when compiling failed. */
  dir: string
  /** Why the package folder is used as it is (no bytecode), if so. */
  fallback?: string
  /** Removes the compiled copy (idempotent). */
  remove(): void
}

/** Copies the .py files (and folders) of `from` into `to`: folders 0755, files 0644. */
function copyTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true })
  chmodSync(to, 0o755)
  for (const e of readdirSync(from, { withFileTypes: true })) {
    if (e.name === '__pycache__' || e.name.startsWith('.')) continue
    if (e.isDirectory()) copyTree(join(from, e.name), join(to, e.name))
    else if (e.isFile() && e.name.endsWith('.py')) {
      copyFileSync(join(from, e.name), join(to, e.name))
      chmodSync(join(to, e.name), 0o644)
    }
  }
}

function compileAll(executable: string, dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    // -I -S: no environment, no user site, no .pth files; -d: tracebacks name the folder as the
    // sandbox sees it.
    const child = spawn(executable, ['-I', '-S', '-m', 'compileall', '-q', '-d', RUNTIME_DIR, dir], {
      shell: false,
      env: {},
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let err = ''
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err = (err + d).slice(-2000)))
    const timer = setTimeout(() => child.kill('SIGKILL'), COMPILE_TIMEOUT_MS)
    child.on('error', (e) => {
      clearTimeout(timer)
      reject(e)
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      if (code === 0) resolve()
      else
        reject(
          new Error(`compileall ${signal ? `was killed by ${signal}` : `exited with code ${code}`}: ${err.trim()}`),
        )
    })
  })
}

/** The runtime folder with bytecode compiled by `executable`, in a private temporary folder. */
export async function compileRuntime(executable: string, source: string): Promise<CompiledRuntime> {
  let base: string | undefined
  const remove = () => {
    if (base) rmSync(base, { recursive: true, force: true })
    base = undefined
  }
  try {
    base = mkdtempSync(join(tmpdir(), 'rulekeeper-pyruntime-')) // 0700: only this user reaches inside
    const dir = join(base, 'runtime')
    copyTree(source, dir)
    await compileAll(executable, dir)
    const pycache = join(dir, '__pycache__')
    if (!existsSync(pycache) || !readdirSync(pycache).some((f) => f.startsWith('rulekeeper_runtime.')))
      throw new Error('no bytecode was written')
    return { dir, remove }
  } catch (err) {
    remove()
    return { dir: source, fallback: (err as Error).message, remove: () => {} }
  }
}
