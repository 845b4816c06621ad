// The simple-rule → Python transpiler's public surface: `transpileSimpleRule` for any caller,
// `RUNTIME_PRELUDE` for the runner, and `createPythonFor`, the hook the API uses to serve
// `pythonBody` (include-python=true).
export { transpileSimpleRule } from './transpile.js'
export { RUNTIME_PRELUDE } from './runtime-prelude.js'
export { createPythonFor } from './python-for.js'
