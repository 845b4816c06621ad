// The registry of rule kinds (src/rules/kinds/): what every kind must declare consistently, checked
// for each kind of the registry, so a new kind's module is held to the same rules as the others.
// The routes themselves are checked per kind by test/api/rule-contract.test.ts.
import t from 'tap'
import { closeEngines, createEngineRegistry } from '../../src/engine/registry.js'
import { HOUSEKEEPING_KEYS } from '../../src/rules/fields.js'
import { fileKeysOf, inLoadOrder, isRuleKind, KINDS, kindDef, RULE_KINDS } from '../../src/rules/kinds/index.js'
import { bodyToFileData, fileDataToView } from '../../src/rules/mapping.js'
import { newRulePaths } from '../../src/rules/paths.js'
import { kindOf } from '../../src/rules/rule-file.js'
import { responseSchema, writeSchema } from '../../src/rules/schemas.js'

const engines = createEngineRegistry()
t.teardown(() => closeEngines(engines))
const unique = (xs: readonly string[]) => new Set(xs).size === xs.length

t.test('names, API paths, folders and schema titles are unique; lookups agree with the registry', async (t) => {
  t.ok(unique(KINDS.map((k) => k.name)), 'names')
  t.ok(unique(KINDS.map((k) => k.apiPath)), 'API paths')
  t.ok(unique(KINDS.map((k) => k.folder)), 'folders')
  t.ok(unique(KINDS.map((k) => k.title)), 'titles')
  t.same(
    [...RULE_KINDS],
    KINDS.map((k) => k.name),
  )
  for (const k of KINDS) {
    t.equal(kindDef(k.name), k)
    t.ok(isRuleKind(k.name))
  }
  t.ok(isRuleKind('policy'))
  t.notOk(isRuleKind('global'))
  t.notOk(isRuleKind(undefined))
})

for (const def of KINDS) {
  t.test(`${def.name}: a consistent definition`, async (t) => {
    const apis = def.fields.map((f) => f.api)
    t.ok(unique(apis), 'field API names are unique')
    t.ok(unique(def.fields.map((f) => f.file)), 'file keys are unique')
    t.ok(unique([...apis, ...def.extraFields.map((f) => f.api)]), 'API-only fields do not shadow fields')
    for (const key of def.requiredFileKeys)
      t.ok(
        def.fields.some((f) => f.file === key),
        `required key ${key} is a field`,
      )
    for (const f of def.listFilters) t.ok(apis.includes(f.field), `filter ${f.param} reads the field ${f.field}`)
    if (def.companion) {
      t.notOk(
        def.fields.some((f) => f.file === def.companion!.fileKey),
        'the companion key is no field',
      )
      t.ok(
        def.extraFields.some((f) => f.api === def.companion!.apiField && !f.readOnly),
        'the companion text is a writable API field',
      )
      t.ok(fileKeysOf(def.name).has(def.companion.fileKey), 'the companion key is accepted in files')
    }
    for (const k of HOUSEKEEPING_KEYS) t.ok(fileKeysOf(def.name).has(k), `${k} is accepted`)
    const write = writeSchema(def.name) as { properties: Record<string, unknown> }
    const response = responseSchema(def.name) as { properties: Record<string, unknown> }
    for (const f of def.fields) {
      if (!f.readOnly) t.ok(f.api in write.properties, `${f.api} is writable`)
      t.ok(f.api in response.properties, `${f.api} is in the response`)
    }
    t.ok(def.missingEngine.length > 0)
    // Queries have no unit tests in their format: no tests field, no Tests key.
    if (def.fields.some((f) => f.file === 'Tests') || !def.name.endsWith('Query'))
      t.same(
        def.fields.find((f) => f.api === 'tests')?.schema,
        { type: 'array', items: def.tests.itemSchema },
        "the tests field follows the kind's test style",
      )
    else t.notOk(fileKeysOf(def.name).has('Tests'), 'a query has no Tests key')
    t.equal(engines[def.name]?.kind, def.name, 'an engine is registered under the kind name')
  })

  t.test(`${def.name}: a body becomes a file of the kind, and back`, async (t) => {
    const hasSeverity = def.fields.some((f) => f.api === 'severity')
    const body = { id: `Kinds.${def.name}`, ...(hasSeverity ? { severity: 'HIGH' } : {}) }
    const data = bodyToFileData(def.name, body, {}, def.companion?.placeholder)
    t.equal(data.AnalysisType, def.analysisType)
    // A kind recognises its own files (a kind with an isKind test needs its keys present).
    const complete = Object.fromEntries(def.requiredFileKeys.map((k) => [k, []]))
    t.equal(kindOf({ ...complete, ...data }), def.name)
    // …and only it: kinds sharing an AnalysisType tell their files apart with isKind.
    const claims = KINDS.filter(
      (k) => k.analysisType === data.AnalysisType && (k.isKind?.({ ...complete, ...data }) ?? true),
    )
    t.same(
      claims.map((k) => k.name),
      [def.name],
      'no other kind claims the file',
    )
    if (def.companion) t.equal(data[def.companion.fileKey], def.companion.placeholder)
    const view = fileDataToView(def.name, data, def.companion ? 'source' : undefined)
    t.equal(view.id, body.id)
    t.equal(view.severity, hasSeverity ? 'HIGH' : undefined)
    if (def.companion) t.equal(view[def.companion.apiField], 'source')
    const [plain] = newRulePaths(def.name, 'Team.Rule')
    t.equal(plain, `${def.folder}/team/Team.Rule.yml`)
  })
}

t.test('loaders read the kinds of a higher load rank last, keeping the order otherwise', async (t) => {
  const paths = KINDS.flatMap((k) => [`${k.folder}/a.yml`, `${k.folder}/b.yml`]).concat(['global_helpers/x.yml'])
  const ordered = inLoadOrder(paths)
  const rank = (p: string) => KINDS.find((k) => p.startsWith(`${k.folder}/`))?.loadRank ?? 0
  for (let i = 1; i < ordered.length; i++)
    t.ok(rank(ordered[i - 1]!) <= rank(ordered[i]!), `${ordered[i - 1]} before ${ordered[i]}`)
  t.same(
    ordered.filter((p) => rank(p) === 0),
    paths.filter((p) => rank(p) === 0),
    'stable',
  )
  t.ok(
    ordered.indexOf(`${kindDef('correlation').folder}/a.yml`) > ordered.indexOf(`${kindDef('simple').folder}/a.yml`),
    'correlation rules after the rules they join',
  )
  t.same(
    ordered.slice(-2),
    [`${kindDef('correlation').folder}/a.yml`, `${kindDef('correlation').folder}/b.yml`],
    'correlation rules last, in their own order',
  )
})
