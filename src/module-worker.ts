// A worker thread running one of this project's modules, from where the caller runs: built (.js
// beside it), or from the sources under tsx (tests, `npm run bench`), where a worker does not
// inherit the main thread's module hooks and must register tsx's before loading the entry.
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
