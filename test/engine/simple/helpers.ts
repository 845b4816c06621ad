// Shared fixtures of the simple-engine tests: example rule files parsed the way the loader parses
// them (YAML 1.2 core schema), rule-file construction, and a one-call detection evaluator.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseDocument } from 'yaml'
import type { EngineContext } from '../../../src/engine/engine.js'
import type { RuleFile } from '../../../src/rules/model.js'
import { compileRule } from '../../../src/engine/simple/index.js'

const EXAMPLES_DIR = fileURLToPath(new URL('../../../examples/rules/simple_rules', import.meta.url))

export const NO_NEIGHBOURS: EngineContext = { findRule: () => undefined, findSupport: () => undefined }

export function parseYaml(text: string): unknown {
  return parseDocument(text, { version: '1.2', schema: 'core' }).toJS()
}

export function exampleRules(): Array<{ file: string; data: Record<string, unknown> }> {
  return readdirSync(EXAMPLES_DIR)
    .filter((f) => f.endsWith('.yml') || f.endsWith('.yaml'))
    .sort()
    .map((file) => ({
      file,
      data: parseYaml(readFileSync(join(EXAMPLES_DIR, file), 'utf8')) as Record<string, unknown>,
    }))
}

export function ruleFile(data: Record<string, unknown>): RuleFile {
  return { kind: 'simple', id: String(data.RuleID ?? 'Test.Rule'), path: '', data }
}

/** Compiles `Detection` (plus any other fields given) and fails loudly if it does not validate. */
export function compileOrThrow(data: Record<string, unknown>) {
  const c = compileRule({ RuleID: 'Test.Rule', Severity: 'LOW', ...data })
  if (c.rule === null) throw new Error(`did not compile: ${JSON.stringify(c.errors)}`)
  return c.rule
}

/** Whether a single match expression holds for an event. */
export function holds(expr: Record<string, unknown>, event: unknown): boolean {
  return compileOrThrow({ Detection: [expr] }).matches(event)
}
