// The live compilers of a build, by rule kind: simple rules in-process (live-rules.ts), and every
// engine that evaluates batches of records (Python streaming rules on the sandboxed pool).
import type { EngineRegistry } from '../engine/engine.js'
import type { RuleKind } from '../rules/model.js'
import { type LiveCompiler, simpleLiveCompiler } from './live-rules.js'
import { batchLiveCompiler } from './python-rules.js'

export function liveCompilers(engines: EngineRegistry): Record<string, LiveCompiler> {
  const out: Record<string, LiveCompiler> = { simple: simpleLiveCompiler }
  for (const [kind, engine] of Object.entries(engines) as Array<[RuleKind, EngineRegistry[RuleKind]]>) {
    const evaluateBatch = engine?.evaluateBatch?.bind(engine)
    if (evaluateBatch && kind !== 'simple') out[kind] = batchLiveCompiler({ evaluateBatch })
  }
  return out
}
