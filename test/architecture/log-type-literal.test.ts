// The log-type registry is the one place that knows which log types exist: no string literal
// 'Editor.Audit' in src/ outside the ingest modules of that log type, but for the exceptions listed
// here. Literals are found with TypeScript's own parser (quotes, template literals), so comments
// and Markdown backticks in them do not count.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import ts from 'typescript'

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src')
/** The log type's own modules: its schema defines the name once (EDITOR_AUDIT). */
const LOG_TYPE_MODULES = [
  'ingest/editor-audit-schema.ts',
  'ingest/editor-audit-record.ts',
  'ingest/editor-audit-meanings.ts',
  'ingest/editor-audit-log-type.ts',
  'ingest/log-types.ts',
  'ingest/log-type.ts',
]
/** Where the name is an example value, not a fact the code relies on. */
const EXCEPTIONS: Record<string, string> = {
  'api/openapi-examples.ts': "OpenAPI examples: a sample rule's logTypes",
}

function modules(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? modules(p) : p.endsWith('.ts') ? [p] : []
  })
}

/** The line numbers of string-like literals whose text is exactly `text`. */
function literalLines(file: string, text: string): number[] {
  const source = fs.readFileSync(file, 'utf8')
  if (!source.includes(text)) return []
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true)
  const lines: number[] = []
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteralLike(node) && node.text === text)
      lines.push(sf.getLineAndCharacterOfPosition(node.getStart()).line + 1)
    ts.forEachChild(node, visit)
  }
  visit(sf)
  return lines
}

t.test("no module outside Editor.Audit's own names the literal 'Editor.Audit'", async (t) => {
  const hits = modules(SRC).flatMap((f) => {
    const name = path.relative(SRC, f).split(path.sep).join('/')
    return literalLines(f, 'Editor.Audit').map((line) => ({ name, line }))
  })
  t.ok(
    hits.some((h) => h.name === 'ingest/editor-audit-schema.ts'),
    'the check sees literals (the schema module defines the name)',
  )
  const offenders = hits
    .filter((h) => !LOG_TYPE_MODULES.includes(h.name) && !(h.name in EXCEPTIONS))
    .map((h) => `${h.name}:${h.line}`)
  t.same(offenders, [], 'read the name from the log-type registry (src/ingest/log-types.ts)')
})
