// The engines compiled into this build. Each kind's engine adds itself here with one line; a kind
// without one answers 501 on writes that must run its tests, and `rulekeeper test` reports its
// tests as not run.
import type { EngineRegistry } from './engine.js'
import { correlationEngine } from './correlation/index.js'
import { simpleEngine } from './simple/index.js'

export function createEngineRegistry(): EngineRegistry {
  return {
    correlation: correlationEngine,
    simple: simpleEngine,
  }
}
