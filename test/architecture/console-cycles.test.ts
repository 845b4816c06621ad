// No import cycle among the console's modules (console/**/*.js): static imports and re-exports,
// dynamic `import()`, and a module path handed to a loader (app.js's lazy views) — any quoted
// relative `.js` path that names a console module — are all edges; a cycle is reported as the chain
// of modules that closes it. A page's modules load in the browser as they are, so a cycle there is
// an order-of-evaluation bug waiting (history.js ⇄ rule.js was one).
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { importCycles } from '../helpers/import-cycles.js'

const CONSOLE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'console')
const RELATIVE_JS = /['"`](\.{1,2}\/[^'"`\s]+\.js)['"`]/g

function modules(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? modules(p) : p.endsWith('.js') ? [p] : []
  })
}

/** The console modules a module names (its imports, static or dynamic, and paths it loads). */
function edgesOf(file: string): string[] {
  const out = new Set<string>()
  for (const m of fs.readFileSync(file, 'utf8').matchAll(RELATIVE_JS)) {
    const target = path.resolve(path.dirname(file), m[1]!)
    if (target.startsWith(CONSOLE + path.sep) && fs.existsSync(target)) out.add(target)
  }
  return [...out]
}

t.test('console/ has no import cycle', async (t) => {
  const files = modules(CONSOLE)
  t.ok(files.length > 10, `${files.length} modules read`)
  const app = path.join(CONSOLE, 'app.js')
  const views = path.join(CONSOLE, 'views')
  t.ok(edgesOf(app).includes(path.join(views, 'rule.js')), 'a lazily loaded view is an edge (app.js → views/rule.js)')
  t.ok(
    edgesOf(path.join(views, 'history.js')).includes(path.join(views, 'rule-form.js')),
    'a dynamic import() is an edge (history.js → rule-form.js)',
  )
  t.same(importCycles(files, edgesOf, CONSOLE), [], 'no console module imports one that imports it back')
})
