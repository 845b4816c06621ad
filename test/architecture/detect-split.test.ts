// Detection's split (issue 26): the log-reading loop (detect/detector.ts) and the file store
// (detect/detection-store.ts) are built only by detection's entry point (detect/index.ts); every
// other module reaches them through narrow interfaces (the alert book's, the ledger contract), and
// no module of detect/ is over 400 lines.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src')
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/g

function modules(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? modules(p) : p.endsWith('.ts') ? [p] : []
  })
}

t.test('only detect/index.ts imports the loop and the file store', async (t) => {
  const closed = ['detect/detector.ts', 'detect/detection-store.ts']
  const importers: string[] = []
  for (const file of modules(SRC)) {
    const rel = path.relative(SRC, file)
    if (rel === 'detect/index.ts') continue
    for (const m of fs.readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const target = path.relative(SRC, path.resolve(path.dirname(file), m[1]!.replace(/\.js$/, '.ts')))
      if (closed.includes(target)) importers.push(`${rel} → ${target}`)
    }
  }
  t.same(importers, [], 'others use the alert book and the ledger contract')
})

t.test('no module of detect/ is over 400 lines', async (t) => {
  const files = modules(path.join(SRC, 'detect'))
  t.ok(files.length > 20, `${files.length} modules`)
  const long = files
    .map((f) => [path.relative(SRC, f), fs.readFileSync(f, 'utf8').split('\n').length - 1] as const)
    .filter(([, n]) => n > 400)
    .map(([f, n]) => `${f}: ${n} lines`)
  t.same(long, [])
})
