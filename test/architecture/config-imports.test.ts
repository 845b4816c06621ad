// config/ is a bottom room: no module of src/config/ imports a feature folder (type-only imports
// included), nor the modules above them that assemble the feature sections (config-sections.ts)
// or the service (main.ts). It may import only config/ itself and the shared leaf modules at the
// root of src/ (errors.ts, is-plain-object.ts).
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src')
const CONFIG = path.join(SRC, 'config')
const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g
/** Root modules that sit above the feature folders. */
const ABOVE = ['main.ts', 'config-sections.ts'].map((f) => path.join(SRC, f))

function importsOf(file: string): string[] {
  const out: string[] = []
  for (const m of fs.readFileSync(file, 'utf8').matchAll(IMPORT))
    out.push(path.resolve(path.dirname(file), (m[1] ?? m[2])!.replace(/\.js$/, '.ts')))
  return out
}

t.test('src/config/ imports no feature folder and nothing above them', async (t) => {
  const files = fs.readdirSync(CONFIG).filter((f) => f.endsWith('.ts'))
  t.ok(files.length >= 4, `${files.length} config modules read`)
  const all = files.flatMap((f) => importsOf(path.join(CONFIG, f)).map((to) => [f, to] as const))
  t.ok(
    all.some(([, to]) => path.dirname(to) === CONFIG),
    'the check sees config/ imports (load.ts imports problems.ts)',
  )
  const offenders = all
    .filter(([, to]) => {
      const dir = path.dirname(to)
      const inFolder = dir !== SRC && dir !== CONFIG
      return inFolder || ABOVE.includes(to)
    })
    .map(([from, to]) => `config/${from} → ${path.relative(SRC, to)}`)
  t.same(offenders, [], 'the sections are assembled above the features and handed to loadConfig')
})
