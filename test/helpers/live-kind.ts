// A rule language that is not simple rules, for tests of detection's `live` seam: a rule matches
// a record whose `field` equals `value`, titled by it. Its module is what an Offload names, so the
// rule worker builds it on its thread from the rule's data (`compileOnWorker`), as it would any
// engine's.
import type { LiveCompiler } from '../../src/engine/engine.js'
import type { WorkerCompile } from '../../src/engine/live.js'

export const compileOnWorker: WorkerCompile = (data) => {
  const field = data.field
  const value = data.value
  if (typeof field !== 'string' || typeof value !== 'string') return { error: 'field and value must be strings' }
  return {
    evaluate: (event) =>
      (event as Record<string, unknown>)[field] === value
        ? { matched: true, title: `${field} is ${value}`, dedup: value, severity: 'LOW', alertContext: {} }
        : { matched: false },
    requires: [{ key: field, resolver: () => (r) => (r as Record<string, unknown>)[field], values: [value] }],
  }
}

/** The kind's `live` member: the rule's file data is `{ field, value }`. */
export const equalsLive: LiveCompiler = (rule) => {
  const data = rule.file.data
  const built = compileOnWorker(data)
  return 'error' in built ? built : { ...built, offload: { module: import.meta.url, data } }
}
