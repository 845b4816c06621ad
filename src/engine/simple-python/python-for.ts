// The API's `pythonFor` hook: the generated module of an indexed simple rule (the kind with a
// generated Python view, rules/kinds/), transpiled once per IndexedRule object (a WeakMap, so a
// rule replaced by a new revision takes its entry with it).
import { kindDef } from '../../rules/kinds/index.js'
import type { IndexedRule } from '../../rules/rule-index.js'
import { transpileSimpleRule } from './transpile.js'

export function createPythonFor(): (rule: IndexedRule) => string | undefined {
  const cache = new WeakMap<IndexedRule, string | null>()
  return (rule) => {
    if (!kindDef(rule.kind).pythonView) return undefined
    let body = cache.get(rule)
    if (body === undefined) {
      body = transpileSimpleRule(rule.file.data) ?? null
      cache.set(rule, body)
    }
    return body ?? undefined
  }
}
