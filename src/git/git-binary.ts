// The `git` binary as an optional accelerator for bulk reads (repository.md): whether it is
// installed, and how it runs: none of the caller's GIT_* variables, no system or global config
// (a user's log format or signature settings would change the output), and no replace refs
// (isomorphic-git ignores them), so it reads exactly what the in-process readers read.
import { spawnSync } from 'node:child_process'

let installed: boolean | undefined

/** Whether a usable `git` is on PATH (checked once per process). */
export function gitBinaryAvailable(): boolean {
  if (installed === undefined)
    installed = spawnSync('git', ['--version'], { stdio: 'ignore', timeout: 5000 }).status === 0
  return installed
}

export function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v
  env.GIT_CONFIG_NOSYSTEM = '1'
  env.GIT_CONFIG_GLOBAL = '/dev/null'
  env.GIT_NO_REPLACE_OBJECTS = '1'
  return env
}
