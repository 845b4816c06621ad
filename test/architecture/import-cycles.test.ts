// No import cycle anywhere in src/ (issue 12): every relative import, type-only ones included, is
// followed from every module; a cycle is reported as the chain of modules that closes it.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

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
  const state = new Map<string, 'open' | 'done'>()
  const stack: string[] = []
  const cycles: string[] = []
  const visit = (f: string) => {
    state.set(f, 'open')
    stack.push(f)
    for (const to of edges.get(f) ?? []) {
      if (state.get(to) === 'open')
        cycles.push([...stack.slice(stack.indexOf(to)), to].map((x) => path.relative(SRC, x)).join(' → '))
      else if (!state.has(to)) visit(to)
    }
    stack.pop()
    state.set(f, 'done')
  }
  for (const f of files) if (!state.has(f)) visit(f)
  t.ok(files.length > 100, `${files.length} modules read`)
  t.ok([...edges.values()].flat().length > files.length, 'their imports were found')
  t.same(cycles, [], 'no module imports one that imports it back')
})
