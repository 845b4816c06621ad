// The simple-rule → Python transpiler's public surface: `transpileSimpleRule` for any caller and
// `pythonBodyFor`, the hook the API's `pythonFor` uses to serve `pythonBody` (include-python=true).
export { transpileSimpleRule, transpileTree } from './transpile.js'
export { pyLiteral, pyString } from './py-literal.js'
export { RUNTIME_PRELUDE } from './runtime-prelude.js'
export { createPythonFor } from './python-for.js'
import { transpileSimpleRule } from './transpile.js'

/** `pythonBody` of a simple rule's file form (undefined when the rule does not validate). */
export function pythonBodyFor(data: Readonly<Record<string, unknown>>): string | undefined {
  return transpileSimpleRule(data)
}
