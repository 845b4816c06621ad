// The `git` binary as an optional accelerator for bulk reads (repository.md): whether it is
// installed, and the environment it runs with (none of the caller's GIT_* variables, so it reads
// the repository it is pointed at and nothing else).
import { spawnSync } from 'node:child_process'

let installed: boolean | undefined

/** Whether a usable `git` is on PATH (checked once per process). */
export function gitBinaryAvailable(): boolean {
  if (installed === undefined) installed = spawnSync('git', ['--version'], { stdio: 'ignore', timeout: 5000 }).status === 0
  return installed
}

export function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v
  return env
}
