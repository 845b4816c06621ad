// The console lists no rule kind and no log type by hand: it reads them from the server (`GET /kinds`,
// `GET /log-types`), so a new kind or log type needs no console change. No console module quotes a
// registered kind's API path (`'simple-rules'`), and none quotes a `Vendor.Name`-shaped log type
// (`'AWS.CloudTrail'`) — the shape templates and log-type lists had when they lived in console/.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { KINDS } from '../../src/rules/kinds/index.js'

const CONSOLE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'console')
const LOG_TYPE_SHAPED = /(['"`])[A-Z][A-Za-z0-9]*(?:\.[A-Z][A-Za-z0-9]*)+\1/g

function modules(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? modules(p) : p.endsWith('.js') ? [p] : []
  })
}

t.test('console/ quotes no kind path and no log type', async (t) => {
  const files = modules(CONSOLE)
  t.ok(files.length > 10, `${files.length} modules read`)
  const found: string[] = []
  for (const f of files) {
    const text = fs.readFileSync(f, 'utf8')
    const name = path.relative(CONSOLE, f)
    for (const k of KINDS)
      for (const q of ["'", '"', '`']) if (text.includes(`${q}${k.apiPath}${q}`)) found.push(`${name}: ${k.apiPath}`)
    for (const m of text.matchAll(LOG_TYPE_SHAPED)) found.push(`${name}: ${m[0]}`)
  }
  t.same(found, [], 'kinds and log types come from the server')
})
