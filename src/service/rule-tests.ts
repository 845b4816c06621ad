// The unit tests of one rule as the engines run them, for every caller that reports them (the CLI's
// `test`, a plan): a kind without an engine, or a run that cannot start, is "not run", never a pass.
import type { EngineContext, EngineRegistry, TestOutcome } from '../engine/engine.js'
import { RulekeeperError } from '../errors.js'
import { kindDef } from '../rules/kinds/index.js'
import type { RuleFile } from '../rules/model.js'

/** Every test of a rule; a kind without an engine, or a run that cannot start, is "not run", never a pass. */
export async function runTests(file: RuleFile, ctx: EngineContext, engines: EngineRegistry): Promise<TestOutcome[]> {
  const tests = Array.isArray(file.data.Tests) ? (file.data.Tests as Array<Record<string, unknown>>) : []
  const notRun = (reason: string): TestOutcome[] =>
    tests.map((t) => ({
      name: String(t.Name),
      expected: t.ExpectedResult === true,
      actual: null,
      passed: null,
      error: reason,
    }))
  const engine = engines[file.kind]
  if (!engine) return notRun(kindDef(file.kind).missingEngine)
  try {
    return await engine.runTests(file, ctx)
  } catch (err) {
    return notRun(err instanceof RulekeeperError ? err.message : `the test run failed: ${(err as Error).message}`)
  }
}
