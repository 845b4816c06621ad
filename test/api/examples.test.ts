// The example rules of the template (adapted from the shared examples) through the API: each saves
// with its tests run first, each with one test's ExpectedResult flipped is refused with 400 — so a
// runner that always passes would be caught here. Also the correlation rule's derived fields.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import YAML from 'yaml'
import { createEngineRegistry } from '../../src/engine/registry.js'
import { fileDataToView } from '../../src/rules/mapping.js'
import { KINDS } from '../../src/rules/kinds/index.js'
import type { RuleKind } from '../../src/rules/model.js'
import { kindOf } from '../../src/rules/rule-file.js'
import { startInProcess } from '../helpers/in-process.js'

const TEMPLATE = path.resolve(import.meta.dirname, '../../rules-repo-template')
const PATHS = Object.fromEntries(KINDS.map((k) => [k.name, `/${k.apiPath}`])) as Record<RuleKind, string>
const engines = createEngineRegistry()

function examples(): Array<{ file: string; kind: RuleKind; body: Record<string, unknown> }> {
  const out: Array<{ file: string; kind: RuleKind; body: Record<string, unknown> }> = []
  // Every kind's examples, in load order (correlation rules after the rules they join).
  for (const dir of [...KINDS].sort((a, b) => a.loadRank - b.loadRank).map((k) => `${k.folder}/editor`)) {
    // Python streaming rules have no template example: theirs are the shared examples
    // (test/engine/python/streaming-examples*.test.ts).
    if (!fs.existsSync(path.join(TEMPLATE, dir))) continue
    for (const f of fs.readdirSync(path.join(TEMPLATE, dir)).filter((x) => x.endsWith('.yml'))) {
      const data = YAML.parse(fs.readFileSync(path.join(TEMPLATE, dir, f), 'utf8'), { version: '1.2', schema: 'core' })
      const kind = kindOf(data)!
      const py =
        typeof data.Filename === 'string' ? fs.readFileSync(path.join(TEMPLATE, dir, data.Filename), 'utf8') : undefined
      out.push({ file: `${dir}/${f}`, kind, body: fileDataToView(kind, data, py) })
    }
  }
  return out
}

t.test('every example rule saves through the API with its tests, and fails with a flipped expectation', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  for (const ex of examples()) {
    if (!engines[ex.kind]) continue
    const id = `Copy.${ex.body.id as string}`
    const tests = ex.body.tests as Array<Record<string, unknown>>
    t.ok(tests.length > 0, `${ex.file} has tests`)
    const ok = await s.request('POST', `${PATHS[ex.kind]}?run-tests-only=true`, { ...ex.body, id })
    t.equal(ok.status, 204, `${ex.file}: ${ok.text}`)
    for (let i = 0; i < tests.length; i++) {
      const flipped = structuredClone(tests)
      flipped[i]!.expectedResult = !flipped[i]!.expectedResult
      const bad = await s.request('POST', PATHS[ex.kind], { ...ex.body, id, tests: flipped })
      t.equal(bad.status, 400, `${ex.file} test ${i} flipped`)
      t.equal(bad.body.testResults[i].passed, false, `${ex.file} test ${i} reported failing`)
      t.equal(
        bad.body.testResults.filter((r: { passed: boolean }) => !r.passed).length,
        1,
        `${ex.file}: only the flipped test fails`,
      )
    }
  }
})

t.test('a correlation rule reports the rules it references and their log types', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const res = await s.request('GET', '/correlation-rules/Editor.Audit.BruteForceThenSuccess')
  t.equal(res.status, 200)
  t.same(res.body.correlationRuleReferenceIds, ['Editor.Audit.LoginFailed', 'Editor.Audit.LoginSucceeded'])
  t.same(res.body.logTypes, ['Editor.Audit'])
  t.same(res.body.warnings, [])

  // A reference to a rule that does not exist is a 400 on an API write.
  const body = {
    ...res.body,
    id: 'Dangling.Ref',
    detection: (res.body.detection as string).replace('Editor.Audit.LoginSucceeded', 'No.Such.Rule'),
  }
  const bad = await s.request('POST', '/correlation-rules?run-tests-first=false', body)
  t.equal(bad.status, 400)
  t.equal(bad.body.errors[0].path, '/detection')
  t.match(bad.body.errors[0].message, /No\.Such\.Rule/)
  t.type(bad.body.errors[0].line, 'number')

  // Deleting a referenced rule is allowed; the correlation rule then carries a warning.
  t.equal((await s.request('DELETE', '/simple-rules/Editor.Audit.LoginSucceeded')).status, 204)
  const after = await s.request('GET', '/correlation-rules/Editor.Audit.BruteForceThenSuccess')
  t.equal(after.status, 200)
  t.match(after.body.warnings[0].message, /Editor\.Audit\.LoginSucceeded/)
  t.same(after.body.logTypes, ['Editor.Audit'])
})
