// Where the worker's Python files are at run time. They live in the package's top-level `python/`
// folder; this module sits at src/engine/python/ (run through tsx) or dist/engine/python/ (compiled
// with tsconfig.build.json), both three levels below the package root. A build with rootDir '.'
// (dist/src/engine/python/) is four levels down, so that is checked too.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { unavailable } from '../../errors.js'

const WORKER_FILE = 'rulekeeper_worker.py'
const CANDIDATES = ['../../../python/', '../../../../python/']

/** The absolute path of python/rulekeeper_worker.py. */
export function workerScriptPath(): string {
  for (const rel of CANDIDATES) {
    const path = fileURLToPath(new URL(rel + WORKER_FILE, import.meta.url))
    if (existsSync(path)) return path
  }
  throw unavailable(`Python tests cannot run: the worker runtime (python/${WORKER_FILE}) is missing from this installation`)
}
