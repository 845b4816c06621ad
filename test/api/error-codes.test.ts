// Every error answer carries the stable `code` of errors.ts beside its `message` (issue 26): the
// funnel's own answers (no route, a method a path lacks, an internal error) as well as the
// RulekeeperErrors of the routes; each body is valid against the documented Error schema, whose
// `code` lists every code.
import { Ajv } from 'ajv'
import t from 'tap'
import { simpleEngine } from '../../src/engine/simple/index.js'
import { ERROR_CODES } from '../../src/errors.js'
import { startInProcess } from '../helpers/in-process.js'
import { SAMPLE_BODIES } from '../helpers/rulekeeper.js'

t.test('error answers carry the stable code, as the Error schema documents it', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const doc = (await s.send('GET', '/openapi.json')).body as any
  const schema = doc.components.schemas.Error
  t.same(schema.properties.code.enum, [...ERROR_CODES], 'the document lists every code')
  t.ok(schema.required.includes('code'), 'code is required')
  const resolved = JSON.parse(JSON.stringify(schema).replace(/\{"\$ref":"#\/components\/schemas\/[^"]+"\}/g, '{}'))
  const validate = new Ajv({ strict: false }).compile(resolved)

  t.equal((await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('Codes.Rule'))).status, 200)
  const viewer = await s.makeToken('viewer', ['View Rules'])
  const etagNow = (await s.request('GET', '/simple-rules/Codes.Rule')).headers.get('etag')
  t.ok(etagNow, 'the rule has an ETag')

  const cases: Array<[string, Promise<{ status: number; body: any }>, number, string]> = [
    ['no token', s.send('GET', '/simple-rules'), 401, 'Unauthorized'],
    [
      'a token without the permission',
      s.send('POST', '/simple-rules', SAMPLE_BODIES.simple('Codes.Other'), { 'X-API-Key': viewer }),
      403,
      'Forbidden',
    ],
    ['no route', s.request('GET', '/no-such-route'), 404, 'NotFound'],
    ['a method the path lacks', s.request('PATCH', '/simple-rules'), 405, 'MethodNotAllowed'],
    ['no such rule', s.request('GET', '/simple-rules/No.Such.Rule'), 404, 'NotFound'],
    ['no such alert', s.request('GET', '/alerts/nope'), 404, 'NotFound'],
    ['a console file that does not exist', s.send('GET', '/console/nope.js'), 404, 'NotFound'],
    [
      'an invalid body',
      s.request('POST', '/simple-rules', { id: 'Codes.Bad', severity: 'LOUD' }),
      400,
      'ValidationFailed',
    ],
    ['a bad cursor', s.request('GET', '/simple-rules?cursor=nope'), 400, 'BadRequest'],
    [
      'a body that is not JSON',
      s.request('POST', '/simple-rules', 'id: x', { 'Content-Type': 'text/plain' }),
      415,
      'UnsupportedMediaType',
    ],
    [
      'a stale If-Match',
      s.request('DELETE', '/simple-rules/Codes.Rule', undefined, { 'If-Match': '"0000"' }),
      412,
      'PreconditionFailed',
    ],
  ]
  for (const [what, pending, status, code] of cases) {
    const res = await pending
    t.equal(res.status, status, `${what}: ${status}`)
    t.equal(res.body?.code, code, `${what}: code ${code}`)
    t.equal(typeof res.body?.message, 'string', `${what}: a message beside it`)
    t.ok(validate(res.body), `${what}: valid against Error`, { errors: validate.errors })
  }
})

t.test('an internal error is a 500 with the code Internal and the request id only', async (t) => {
  const s = await startInProcess({
    engines: {
      simple: {
        ...simpleEngine,
        check(rule, ctx) {
          if (rule.data.RuleID === 'Codes.Broken') throw new Error('an engine that breaks')
          return simpleEngine.check(rule, ctx)
        },
      },
    },
  })
  t.teardown(() => s.close())
  const res = await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('Codes.Broken'))
  t.equal(res.status, 500)
  t.same(Object.keys(res.body).sort(), ['code', 'message', 'requestId'])
  t.equal(res.body.code, 'Internal')
  t.notMatch(res.text, /an engine that breaks/, 'the cause stays in the log')
})
