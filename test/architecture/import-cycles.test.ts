// No import cycle anywhere in src/ (issue 12): every relative import, type-only ones included, is
// followed from every module; a cycle is reported as the chain of modules that closes it.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { importCycles } from '../helpers/import-cycles.js'

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src')
const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g

function modules(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? modules(p) : p.endsWith('.ts') ? [p] : []
  })
}

function importsOf(file: string): string[] {
  const out: string[] = []
  for (const m of fs.readFileSync(file, 'utf8').matchAll(IMPORT)) {
    const target = path.resolve(path.dirname(file), (m[1] ?? m[2])!.replace(/\.js$/, '.ts'))
    if (fs.existsSync(target)) out.push(target)
  }
  return out
}

t.test('src/ has no import cycle', async (t) => {
  const files = modules(SRC)
  const edges = new Map(files.map((f) => [f, importsOf(f)]))
  const cycles = importCycles(files, (f) => edges.get(f) ?? [], SRC)
  t.ok(files.length > 100, `${files.length} modules read`)
  t.ok([...edges.values()].flat().length > files.length, 'their imports were found')
  t.same(cycles, [], 'no module imports one that imports it back')
})
