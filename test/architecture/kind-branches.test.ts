// No branch on a rule kind's name outside the kinds' own modules (issue 26): a kind brings what
// differs with it (its definition in src/rules/kinds/, its engine in src/engine/<kind>/ with its
// `live` member), so no other module of src/ compares a value to a rule kind literal (`kind ===
// 'simple'`, `'correlation' !== rule.kind`, `case 'python':`). The kinds are read from the
// registry; every module is parsed (TypeScript's parser), so AST node kinds such as
// `e.kind === 'combinator'`, which are no rule kind, pass.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import ts from 'typescript'
import { RULE_KINDS } from '../../src/rules/kinds/index.js'

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src')
const KINDS: ReadonlySet<string> = new Set(RULE_KINDS)

function modules(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? modules(p) : p.endsWith('.ts') ? [p] : []
  })
}

/**
 * A kind's own modules (path relative to src/, with `/`): the kind definitions (rules/kinds/) and
 * the engines' folders (engine/<kind>/, engine/<kind>-<part>/: the Python engine serves three kinds).
 */
export function isKindModule(rel: string): boolean {
  if (rel.startsWith('rules/kinds/')) return true
  const m = /^engine\/([^/]+)\//.exec(rel)
  return m !== null && [...KINDS].some((k) => m[1] === k || m[1]!.startsWith(`${k}-`))
}

const EQUALITY = new Set([
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
])

const kindLiteral = (e: ts.Node): string | null =>
  (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) && KINDS.has(e.text) ? e.text : null

/** Every comparison of a value to a rule kind literal in `source`, as `line: text`. */
export function kindBranches(fileName: string, source: string): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true)
  const found: string[] = []
  const report = (node: ts.Node) => {
    const line = file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1
    found.push(`${line}: ${node.getText(file).replace(/\s+/g, ' ')}`)
  }
  const visit = (node: ts.Node) => {
    if (
      ts.isBinaryExpression(node) &&
      EQUALITY.has(node.operatorToken.kind) &&
      (kindLiteral(node.left) !== null || kindLiteral(node.right) !== null)
    )
      report(node)
    else if (ts.isCaseClause(node) && kindLiteral(node.expression) !== null) report(node.expression)
    ts.forEachChild(node, visit)
  }
  visit(file)
  return found
}

t.test('the scan finds a comparison to a kind literal, and only that', async (t) => {
  t.ok(KINDS.has('simple') && KINDS.has('correlation') && KINDS.size >= 5, `kinds: ${[...KINDS].join(', ')}`)
  // What detect/ had before the kinds' `live` members and schedules (must be found) …
  const old = [
    "if (rule.kind !== 'correlation' || rule.view.enabled === false) continue",
    "if (evaluateBatch && kind !== 'simple') out[kind] = compile",
    "if ('python' == r.kind) return",
    'switch (rule.kind) {\n  case `policy`:\n    break\n}',
  ]
  for (const code of old) t.equal(kindBranches('old.ts', code).length, 1, code)
  // … and what is no branch on a rule kind (must pass).
  const fine = [
    "if (e.kind === 'combinator' && e.op === 'All') walk(e.items)",
    "const def = kindDef('correlation')",
    'if (!kindDef(rule.kind).pythonView) return undefined',
    "const registry = { simple: simpleEngine, kind: 'python' }",
  ]
  for (const code of fine) t.same(kindBranches('fine.ts', code), [], code)
  t.ok(isKindModule('engine/simple/live.ts') && isKindModule('engine/simple-python/python-for.ts'))
  t.ok(isKindModule('rules/kinds/correlation.ts') && isKindModule('engine/python/scheduled-engine.ts'))
  t.notOk(isKindModule('detect/correlation-schedule.ts') || isKindModule('engine/registry.ts'))
})

t.test('no module outside the kinds’ own compares a rule kind to a kind literal', async (t) => {
  const files = modules(SRC)
  t.ok(files.length > 100, `${files.length} modules read`)
  const offenders: string[] = []
  for (const f of files) {
    const rel = path.relative(SRC, f).split(path.sep).join('/')
    if (isKindModule(rel)) continue
    for (const hit of kindBranches(rel, fs.readFileSync(f, 'utf8'))) offenders.push(`${rel}:${hit}`)
  }
  t.same(offenders, [], 'ask the kind (rules/kinds/) or its engine (its `live` member) instead')
})
