// A worker thread running one of this project's modules, from where the caller runs: built (.js
// beside it), or from the sources under tsx (tests, `npm run bench`), where a worker does not
// inherit the main thread's module hooks and must register tsx's before loading the entry; or a
// child process on one of them, for work that must be killable (forkModule).
import { type ChildProcess, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'

/** A worker on the module `name` (no extension) in the folder of `callerUrl` (the caller's import.meta.url). */
export function startModuleWorker(callerUrl: string, name: string): Worker {
  if (callerUrl.endsWith('.ts')) {
    const entry = new URL(`./${name}.ts`, callerUrl).href
    const code = `import { register } from ${JSON.stringify(import.meta.resolve('tsx/esm/api'))}\nregister()\nawait import(${JSON.stringify(entry)})\n`
    return new Worker(new URL(`data:text/javascript,${encodeURIComponent(code)}`))
  }
  return new Worker(new URL(`./${name}.js`, callerUrl))
}

/**
 * A child process on the module `name` (no extension) in the folder of `callerUrl`, with an IPC
 * channel (JSON) and only PATH from the environment: for work that must be killable and bounded apart
 * from the server (a thread cannot be stopped inside a native call). Under tsx it registers tsx first.
 */
export function forkModule(callerUrl: string, name: string): ChildProcess {
  const ts = callerUrl.endsWith('.ts')
  const entry = fileURLToPath(new URL(`./${name}.${ts ? 'ts' : 'js'}`, callerUrl))
  return fork(entry, [], {
    execArgv: ts ? ['--import', import.meta.resolve('tsx')] : [],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    serialization: 'json',
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  })
}
