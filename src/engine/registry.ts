// The engines compiled into this build. A kind without one answers 501 on writes that must run
// its tests, and `rulekeeper test` reports its tests as not run. The Python engine (scheduled and
// streaming rules, policies) needs its settings (interpreter, pool size, timeout) and owns worker
// processes: closeEngines() ends them. Simple and Python streaming rules also evaluate records for
// detection (their `live` member: simple rules in-process, Python ones in batches on the same pool);
// policies only run their tests (no resource ingest here). Scheduled and saved queries have their
// SQL bound by DuckDB when read (engine/sql/).
import type { Logger } from '../log.js'
import type { EngineRegistry } from './engine.js'
import { correlationEngine } from './correlation/index.js'
import { createPythonEngine, type PythonEngineOptions } from './python/index.js'
import { simpleEngine } from './simple/index.js'
import { sqlEngine } from './sql/index.js'
import { SqlChecker } from './sql/sql-check.js'
import { findLogType, logTypeNames } from '../ingest/log-types.js'

export interface EngineSettings {
  python?: Pick<
    PythonEngineOptions,
    | 'command'
    | 'poolSize'
    | 'timeoutMs'
    | 'serverEnv'
    | 'queueLimit'
    | 'queuePerCaller'
    | 'scratchBytes'
    | 'uidBase'
    | 'metrics'
    | 'detection'
  > & { logger?: Logger }
  /** The SQL checker of query files (main.ts shares its own with the query engine); one of its own when absent. */
  sql?: SqlChecker
}

/** The default Python settings (config/default.yaml has the same). */
export const DEFAULT_PYTHON = { command: 'python3', poolSize: 2, timeoutMs: 5000 }

export function createEngineRegistry(settings: EngineSettings = { python: DEFAULT_PYTHON }): EngineRegistry {
  // Scheduled and saved queries share one SQL checker (its DuckDB opens on the first query read).
  const sql = settings.sql ?? new SqlChecker(() => logTypeNames().flatMap((n) => findLogType(n) ?? []))
  const registry: EngineRegistry = {
    correlation: correlationEngine,
    simple: simpleEngine,
    scheduledQuery: sqlEngine('scheduledQuery', sql, { scheduled: true }),
    savedQuery: { ...sqlEngine('savedQuery', sql, { scheduled: false }), close: undefined },
  }
  if (settings.python) {
    const python = createPythonEngine(settings.python)
    const engine = python.engine
    registry.scheduled = {
      ...engine,
      // Whether a named query exists depends on other files: derived when the rule is read.
      describe: (rule, ctx) => ({
        fields: {},
        warnings: engine.check(rule, ctx).warnings.filter((w) => w.code === 'UnknownScheduledQuery'),
      }),
      checkAsync: (rule, ctx) => python.checkPythonModule(rule, ctx),
      checkModules: python.checkModules,
      prepare: async () => {
        await python.pool
          .describe()
          .catch((err: unknown) =>
            settings.python?.logger?.warn({ err: (err as Error).message }, 'python tests unavailable'),
          )
      },
      close: () => python.pool.close(),
    }
    // Python streaming rules: the same module, verdict and sandbox (detections.md §4); the pool is
    // the scheduled engine's (it starts and closes it).
    registry.python = {
      kind: 'python',
      check: engine.check,
      runTests: engine.runTests,
      checkAsync: registry.scheduled.checkAsync,
      live: python.live,
      quarantined: python.quarantined,
    }
    // Policies: policy(resource) in the same sandbox and pool, False the alert (docs/policies.md).
    registry.policy = {
      kind: 'policy',
      check: python.policy.engine.check,
      runTests: python.policy.engine.runTests,
      checkAsync: python.policy.checkPythonModule,
    }
  }
  return registry
}

export async function closeEngines(registry: EngineRegistry): Promise<void> {
  await Promise.all(Object.values(registry).map((e) => e?.close?.()))
}
