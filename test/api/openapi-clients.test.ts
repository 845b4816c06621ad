// The served OpenAPI document as API users' tools see it: Redocly's recommended rules (0 errors, at
// most 3 warnings) and Spectral's spectral:oas (nothing) at both base paths, in-process and
// offline; and TypeScript types generated from it by openapi-typescript, against which a small
// client doing GET → edit → PUT type-checks under `strict` with no cast (and a wrong one does not),
// then runs against the server.
// Real port: a real client (the generated client fetches from the server; the lint runs in process).
import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { astToString, default as openapiTS } from 'openapi-typescript'
import t from 'tap'
import ts from 'typescript'
import { redoclyLint, spectralLint } from '../helpers/openapi-lint.js'
import { startInProcess } from '../helpers/in-process.js'
import { startTestServer, tempDir } from '../helpers/rulekeeper.js'

for (const basePath of ['/', '/v1']) {
  const prefix = basePath === '/' ? '' : basePath
  t.test(
    `base path ${basePath}: Redocly (recommended) and Spectral (spectral:oas) pass the served document`,
    async (t) => {
      const s = await startInProcess({ config: { api: { basePath } } })
      t.teardown(() => s.close())
      const doc = (await s.send('GET', `${prefix}/openapi.json`)).body
      const redocly = await redoclyLint(doc)
      const errors = redocly.filter((p) => p.severity === 'error')
      const warnings = redocly.filter((p) => p.severity !== 'error')
      t.same(errors, [], 'Redocly: no errors')
      t.ok(warnings.length <= 3, `Redocly: at most 3 warnings (${warnings.length})`, { warnings })
      // The only ones allowed: the three open routes that have no 4xx answer.
      t.same(
        warnings.map((w) => w.rule),
        warnings.map(() => 'operation-4xx-response'),
        'Redocly: the warnings are the open routes without a 4xx answer',
      )
      const spectral = await spectralLint(doc)
      t.same(spectral, [], 'Spectral: no errors, warnings or hints')
    },
  )
}

const CLIENT = `
import type { components, paths } from './api.js'

type Rule = components['schemas']['SimpleRule']
type RuleWrite = paths['/simple-rules/{id}']['put']['requestBody']['content']['application/json']
type Failure = components['schemas']['Error']

export async function editSeverity(base: string, key: string, id: string): Promise<{ status: number; rule: Rule }> {
  const url = base + '/simple-rules/' + encodeURIComponent(id)
  const res = await fetch(url, { headers: { 'X-API-Key': key } })
  const rule: Rule = await res.json()
  // Required fields are not optional: these need no '?', '!' or cast.
  const tags: string[] = rule.tags
  const name: string = rule.tests[0].name
  const author: string = rule.createdBy.id
  // The rule as read, edited, is a valid write body (its read-only fields are typed and ignored).
  const edited: RuleWrite = { ...rule, severity: 'LOW', tags: [...tags, name, author] }
  const put = await fetch(url, {
    method: 'PUT',
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
    body: JSON.stringify(edited),
  })
  if (put.status >= 400) {
    const failure: Failure = await put.json()
    const firstTest: boolean | undefined = failure.testResults?.[0]?.passed
    throw new Error(failure.message + (failure.errors ?? []).map((e) => e.path + ': ' + e.message).join('; ') + String(firstTest))
  }
  return { status: put.status, rule: await put.json() }
}
`

// Each line must be refused by the compiler: the types say something.
const WRONG = `
import type { components } from './api.js'
type Rule = components['schemas']['SimpleRule']
type RuleWrite = components['schemas']['SimpleRuleWrite']
export const a: RuleWrite = { id: 'x', detection: '- a' }
export const b: RuleWrite = { id: 'x', severity: 'SEVERE', detection: '- a' }
export const c = (r: Rule): number => r.severity
export const d = (r: Rule): string => r.alertTitle
`

t.test('types generated with openapi-typescript type-check a GET → edit → PUT client, which then works', async (t) => {
  const s = await startTestServer()
  t.teardown(() => s.close())
  const doc = await (await fetch(`${s.url}/openapi.json`)).json()
  const dir = tempDir('rk-openapi-ts-')
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const generated = astToString(await openapiTS(doc))
  fs.writeFileSync(path.join(dir, 'api.ts'), generated)
  fs.writeFileSync(path.join(dir, 'client.ts'), CLIENT)
  fs.writeFileSync(path.join(dir, 'wrong.ts'), WRONG)
  fs.writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}\n')

  const check = (file: string) => {
    const program = ts.createProgram([path.join(dir, file)], {
      strict: true,
      noEmit: true,
      noUncheckedIndexedAccess: false,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: [],
      skipLibCheck: true,
    })
    return ts
      .getPreEmitDiagnostics(program)
      .map(
        (d) =>
          `${d.file ? path.basename(d.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`,
      )
  }
  t.same(check('client.ts'), [], 'the client type-checks under strict, with no cast')
  t.match(generated, /readonly createdAt\?: string|createdAt\?: string/, 'read-only fields are typed in the write body')
  const wrong = check('wrong.ts')
  t.equal(
    wrong.filter((d) => d.startsWith('wrong.ts')).length >= 4,
    true,
    'a body without severity, an unknown severity, a severity as a number and an optional field as always there are refused',
    { wrong },
  )

  const id = (await s.request('GET', '/simple-rules?limit=1')).body.results[0].id
  const client = (await import(pathToFileURL(path.join(dir, 'client.ts')).href)) as {
    editSeverity(base: string, key: string, id: string): Promise<{ status: number; rule: any }>
  }
  const { status, rule } = await client.editSeverity(s.url, s.token, id)
  t.equal(status, 200, 'the PUT of the edited rule answers 200 (it existed)')
  t.equal(rule.severity, 'LOW', 'the edit is saved')
})
