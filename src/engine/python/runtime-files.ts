// Where the runner's Python files are at run time. They live in the package's top-level `python/`
// folder; this module sits at src/engine/python/ (run through tsx) or dist/engine/python/ (compiled
// with tsconfig.build.json), both three levels below the package root. A build with rootDir '.'
// (dist/src/engine/python/) is four levels down, so that is checked too.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { unavailable } from '../../errors.js'

const RUNNER_FILE = 'rulekeeper_runner.py'
const CANDIDATES = ['../../../python/', '../../../../python/']

/** The absolute path of python/rulekeeper_runner.py (its folder is mounted into each sandbox). */
export function runnerScriptPath(): string {
  for (const rel of CANDIDATES) {
    const path = fileURLToPath(new URL(rel + RUNNER_FILE, import.meta.url))
    if (existsSync(path)) return path
  }
  throw unavailable(`Python tests cannot run: the runner (python/${RUNNER_FILE}) is missing from this installation`)
}
