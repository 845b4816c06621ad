// The index-time check of a revision's Python files: every module compiled and imported (globals
// served by GlobalID, as the test runner loads a rule) in one sandboxed run for all of them, a
// marker per module. A module that hangs or crashes its run is invalid with the reason, and the
// rest resume in a fresh sandbox; after MAX_STOPS stopped runs (or with no sandbox at all) the
// modules left are `unchecked`, never failed or passed for it.
import type { EngineContext, ModuleProblem, ModuleUnit, ModuleVerdict } from '../engine.js'
import { collectGlobals } from './imports.js'
import { type JobModule, RUN_BUDGET_SPENT, type RunLimits, type TestRecord } from './protocol.js'
import type { WorkerPool } from './worker-pool.js'

/** Stopped runs of one check before the modules left are reported unchecked. */
export const MAX_STOPS = 3
/** The wall clock a check run may spend per module it is given, on top of two per-module timeouts. */
export const RUN_MS_PER_MODULE = 50

/** The function a module must define, by the `AnalysisType` of the file naming it (as Panther loads it). */
const REQUIRED: Readonly<Record<string, string>> = { rule: 'rule', scheduled_rule: 'rule', policy: 'policy' }

const stem = (filename: string) => filename.replace(/^.*\//, '').replace(/\.py$/, '').replace(/\W/g, '_') || 'module'

function verdictOf(record: TestRecord): ModuleVerdict {
  for (const e of record.events) {
    if (e.t === 'module_error')
      return {
        status: 'invalid',
        problem: {
          message: e.message,
          ...(e.code === 'PythonMissingRule' ? { code: e.code } : {}),
          file: e.file,
          line: e.line,
          column: e.column,
        },
      }
    if (e.t === 'import_error')
      return { status: 'invalid', problem: { message: e.message, file: e.file, line: e.line, column: null } }
    if (e.t === 'missing_module') {
      const problem: ModuleProblem = {
        message:
          `not run: module ${e.module} is not installed in the configured interpreter, and no global helper ` +
          'of this repository has that GlobalID',
        file: e.file,
        line: e.line,
        column: null,
      }
      return { status: 'not-run', module: e.module, problem }
    }
  }
  return { status: 'ok' }
}

export function createModuleCheck(
  pool: WorkerPool,
  limits: RunLimits,
): (units: readonly ModuleUnit[], ctx: EngineContext) => Promise<Map<string, ModuleVerdict>> {
  return async (units, ctx) => {
    const out = new Map<string, ModuleVerdict>()
    if (units.length === 0) return out
    const modules: JobModule[] = units.map((u) => ({
      filename: u.filename,
      source: u.source,
      module: stem(u.filename),
      requires: REQUIRED[u.analysisType] ?? null,
    }))
    // One set of globals for the run: everything any of the modules reaches through its imports.
    const globals = collectGlobals(units.map((u) => u.source).join('\n'), ctx)
    let pending = units.map((_, i) => i)
    let stops = 0
    const leave = (reason: string) => {
      for (const i of pending) out.set(units[i]!.key, { status: 'unchecked', reason })
      pending = []
    }
    while (pending.length > 0) {
      let records: TestRecord[]
      try {
        records = await pool.run({
          op: 'modules',
          modules,
          globals,
          tests: pending,
          limits: {
            ...limits,
            cpuSeconds: limits.cpuSeconds * Math.min(pending.length, 60),
            runMs: limits.timeoutMs * 2 + RUN_MS_PER_MODULE * pending.length,
          },
        })
      } catch (err) {
        leave((err as Error).message)
        break
      }
      const last = records[records.length - 1]
      let reached = records.length
      // The run's whole budget ran out: the module running then is not charged with it, it goes again.
      const budgetSpent = last !== undefined && last.status !== 'ok' && !!last.message?.startsWith(RUN_BUDGET_SPENT)
      if (budgetSpent) reached--
      for (const r of records.slice(0, reached)) {
        const key = units[pending[r.i]!]!.key
        if (r.status === 'ok') out.set(key, verdictOf(r))
        else
          out.set(key, {
            status: 'invalid',
            problem: { message: r.message ?? `the run stopped (${r.status})`, file: null, line: null, column: null },
          })
      }
      if (records.length === 0 || (last!.status === 'ok' && reached < pending.length)) {
        pending = pending.slice(reached)
        leave('the Python worker reported nothing for this module')
        break
      }
      pending = pending.slice(reached)
      if (last!.status !== 'ok' && ++stops >= MAX_STOPS && pending.length > 0)
        leave(`the check of this revision's Python files was stopped ${stops} times (last: ${last!.message})`)
    }
    return out
  }
}
