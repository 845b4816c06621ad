// The shared contract suite (like Hono's common.case.test): every route × every documented status
// of api.md, run once per rule kind of the registry (src/rules/kinds/) against the real service in
// process (real repository, requests into its Koa app), plus what the kind declares: its list
// filters, where its files go, its companion file, its Python view. A new kind needs only a sample
// body in test/helpers/rulekeeper.ts (the compiler asks for it). Where a kind's test engine is
// missing in this build the suite expects the documented 501 instead of a test verdict.
import t from 'tap'
import { createEngineRegistry } from '../../src/engine/registry.js'
import { PYTHON_TESTS } from '../../src/rules/fields.js'
import { fieldsOf, KINDS, RULE_KINDS } from '../../src/rules/kinds/index.js'
import type { RuleKind } from '../../src/rules/model.js'
import { parseAnalysisFile } from '../../src/rules/rule-file.js'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'
import { SAMPLE_BODIES } from '../helpers/rulekeeper.js'

const PATHS = Object.fromEntries(KINDS.map((k) => [k.name, `/${k.apiPath}`])) as Record<RuleKind, string>
const engines = createEngineRegistry()

/** Tests that pass, for the sample bodies that have none (a scheduled rule's tests need a log its module reads). */
const PASSING_TESTS: Partial<Record<RuleKind, unknown[]>> = {
  scheduled: [{ name: 'two grants', expectedResult: true, log: { grants: 2 } }],
}

/** A copy of a sample body whose first test expects the opposite of what the rule does. */
function withFailingTest(kind: RuleKind, id: string): Record<string, unknown> {
  const body = withPassingTests(kind, id)
  const tests = structuredClone(body.tests) as Array<Record<string, unknown>>
  tests[0]!.expectedResult = !tests[0]!.expectedResult
  body.tests = tests
  return body
}

function withPassingTests(kind: RuleKind, id: string): Record<string, unknown> {
  const body = SAMPLE_BODIES[kind](id) as Record<string, unknown>
  if (PASSING_TESTS[kind]) body.tests = PASSING_TESTS[kind]
  return body
}

const commitCount = (s: InProcessServer) => Number(s.git('rev-list', '--count', 'HEAD').trim())
const treeFiles = (s: InProcessServer) =>
  s
    .git('ls-tree', '-r', '--name-only', 'HEAD')
    .split('\n')
    .filter((l) => l !== '')

for (const def of KINDS) {
  const kind: RuleKind = def.name
  t.test(`${kind} rules`, async (t) => {
    const s = await startInProcess()
    t.teardown(() => s.close())
    const base = PATHS[kind]
    const hasEngine = engines[kind] !== undefined
    // Queries have no unit tests (their format has no Tests key).
    const hasTestsField = fieldsOf(kind).some((f) => f.api === 'tests')
    // An id held by another kind (the next one of the registry), for the 409 cases.
    const other: RuleKind = RULE_KINDS[(RULE_KINDS.indexOf(kind) + 1) % RULE_KINDS.length]!
    const held = await s.request(
      'POST',
      `${PATHS[other]}?run-tests-first=false`,
      SAMPLE_BODIES[other](`Held.By.${other}`),
    )
    t.equal(held.status, 200, held.text)

    await t.test('GET list answers 200 with results and next', async (t) => {
      const res = await s.request('GET', base)
      t.equal(res.status, 200)
      t.ok(Array.isArray(res.body.results))
      t.equal(res.body.next, null)
    })

    await t.test('GET list answers 400 on a bad query', async (t) => {
      for (const q of ['limit=0', 'limit=1001', 'limit=abc', 'cursor=%%%', 'state=on', 'severity=SEVERE', 'nope=1']) {
        const res = await s.request('GET', `${base}?${q}`)
        t.equal(res.status, 400, q)
        t.type(res.body.message, 'string', q)
      }
    })

    await t.test('POST answers 200 with the saved rule, defaults filled in', async (t) => {
      const before = commitCount(s)
      const res = await s.request('POST', `${base}?run-tests-first=false`, SAMPLE_BODIES[kind](`Contract.${kind}.A`), {
        'X-Change-Reason': 'contract test',
      })
      t.equal(res.status, 200, res.text)
      t.equal(res.body.id, `Contract.${kind}.A`)
      // The alert grouping fields where the kind's format has them (a policy's has none), with their defaults.
      const has = (api: string) => fieldsOf(kind).some((f) => f.api === api)
      for (const [api, value] of [
        ['threshold', 1],
        ['dedupPeriodMinutes', 60],
        ['createAlert', true],
      ] as const) {
        if (has(api)) t.equal(res.body[api], value, api)
        else t.notOk(api in res.body, `${api}: not a field of a ${kind} rule`)
      }
      if (has('enabled')) t.equal(res.body.enabled, true)
      else t.notOk('enabled' in res.body, `enabled: not a field of a ${kind} rule`)
      // Every field the sample leaves out reads back as its default.
      const sample = SAMPLE_BODIES[kind](`Contract.${kind}.A`) as Record<string, unknown>
      for (const f of fieldsOf(kind))
        if (f.default !== undefined && !(f.api in sample)) t.same(res.body[f.api], f.default, `${f.api} default`)
      t.equal(res.body.createdBy.type, 'api-token')
      t.match(res.body.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      t.equal(commitCount(s), before + 1)
      t.ok(res.headers.get('x-request-id'))
    })

    await t.test('POST answers 409 when the id exists', async (t) => {
      const res = await s.request('POST', `${base}?run-tests-first=false`, SAMPLE_BODIES[kind](`Contract.${kind}.A`))
      t.equal(res.status, 409)
      t.match(res.body.message, /already exists/)
    })

    await t.test('POST answers 409 naming the kind when another kind holds the id', async (t) => {
      const res = await s.request('POST', `${base}?run-tests-first=false`, SAMPLE_BODIES[kind](`Held.By.${other}`))
      t.equal(res.status, 409)
      t.match(res.body.message, new RegExp(`a ${other} rule`))
    })

    await t.test(
      "the rule is one file in the kind's folder (and its companion beside it), read back as the kind",
      async (t) => {
        const dir = `${def.folder}/contract`
        const yml = `${dir}/Contract.${kind}.A.yml`
        t.ok(treeFiles(s).includes(yml), yml)
        const text = s.git('show', `HEAD:${yml}`)
        const parsed = parseAnalysisFile(yml, text)
        t.equal(parsed.analysisType, def.analysisType)
        t.equal(parsed.kind, kind)
        t.equal(parsed.id, `Contract.${kind}.A`)
        const companion = def.companion
        if (companion) {
          t.equal(parsed.data?.[companion.fileKey], `Contract.${kind}.A.py`)
          t.equal(
            s.git('show', `HEAD:${dir}/Contract.${kind}.A.py`),
            SAMPLE_BODIES[kind](`Contract.${kind}.A`)[companion.apiField as never],
          )
          const got = await s.request('GET', `${base}/Contract.${kind}.A`)
          t.equal(got.body[companion.apiField], SAMPLE_BODIES[kind](`Contract.${kind}.A`)[companion.apiField as never])
        }
      },
    )

    await t.test(
      "GET list filters by each of the kind's list filters, and rejects the filters of other kinds",
      async (t) => {
        const sample = (await s.request('GET', `${base}/Contract.${kind}.A`)).body
        for (const f of def.listFilters) {
          const value = (sample[f.field] as string[])[0]!
          const hit = await s.request('GET', `${base}?${f.param}=${encodeURIComponent(value)}`)
          t.equal(hit.status, 200, f.param)
          t.ok(
            hit.body.results.some((r: { id: string }) => r.id === `Contract.${kind}.A`),
            `${f.param}=${value} finds it`,
          )
          const miss = await s.request('GET', `${base}?${f.param}=No.Such.Value`)
          t.equal(miss.status, 200, f.param)
          t.notOk(
            miss.body.results.some((r: { id: string }) => r.id === `Contract.${kind}.A`),
            `${f.param}=No.Such.Value does not`,
          )
        }
        const foreign = KINDS.flatMap((k) => k.listFilters.map((f) => f.param)).filter(
          (p) => !def.listFilters.some((f) => f.param === p),
        )
        for (const p of new Set(foreign))
          t.equal((await s.request('GET', `${base}?${p}=x`)).status, 400, `${p} is not a ${kind} filter`)
      },
    )

    await t.test('include-python is accepted exactly where the kind has a Python view', async (t) => {
      const res = await s.request('GET', `${base}/Contract.${kind}.A?include-python=true`)
      t.equal(res.status, def.pythonView ? 200 : 400)
      t.equal((await s.request('GET', `${base}?include-python=true`)).status, def.pythonView ? 200 : 400)
    })

    await t.test('POST answers 400 listing every problem of an invalid body', async (t) => {
      const body = {
        ...SAMPLE_BODIES[kind](`Contract.${kind}.Bad`),
        severity: 'SEVERE',
        threshold: 0,
        bogus: true,
      } as Record<string, unknown>
      const res = await s.request('POST', base, body)
      t.equal(res.status, 400)
      const paths = (res.body.errors as Array<{ path: string }>).map((e) => e.path).sort()
      t.same(paths, ['/bogus', '/severity', '/threshold'])
      t.equal(s.git('ls-tree', '-r', '--name-only', 'HEAD').includes(`Contract.${kind}.Bad`), false)
    })

    await t.test('POST ignores read-only fields', async (t) => {
      const body = {
        ...SAMPLE_BODIES[kind](`Contract.${kind}.RO`),
        createdAt: '2000-01-01T00:00:00.000Z',
        createdBy: { id: 'x', type: 'user' },
        warnings: [],
      }
      const res = await s.request('POST', `${base}?run-tests-first=false`, body)
      t.equal(res.status, 200, res.text)
      t.not(res.body.createdAt, '2000-01-01T00:00:00.000Z')
    })

    if (fieldsOf(kind).some((f) => f.api === 'detection' && f.yamlText)) {
      await t.test('POST answers 400 with line and column for invalid YAML in detection', async (t) => {
        const res = await s.request('POST', base, {
          ...SAMPLE_BODIES[kind](`Contract.${kind}.Yaml`),
          detection: '- KeyPath: a\n  Condition: [Equals\n',
        })
        t.equal(res.status, 400)
        t.equal(res.body.errors[0].path, '/detection')
        t.type(res.body.errors[0].line, 'number')
        t.type(res.body.errors[0].column, 'number')
      })
    }

    if (!hasTestsField) {
      await t.test('a kind without unit tests saves without running any', async (t) => {
        const res = await s.request('POST', base, SAMPLE_BODIES[kind](`Contract.${kind}.NoTests`))
        t.equal(res.status, 200, res.text)
        t.notOk('tests' in res.body)
      })
    } else if (hasEngine) {
      await t.test('POST answers 400 with testResults when a test fails, and saves nothing', async (t) => {
        const before = commitCount(s)
        const res = await s.request('POST', base, withFailingTest(kind, `Contract.${kind}.Failing`))
        t.equal(res.status, 400, res.text)
        t.equal(res.body.testResults[0].passed, false)
        t.ok('error' in res.body.testResults[0])
        if (def.tests.result === PYTHON_TESTS.result) {
          t.ok(res.body.testResults[0].error === null || typeof res.body.testResults[0].error === 'string')
          t.type(res.body.testResults[0].functions, 'object')
          t.type(res.body.testResults[0].functions.detection, 'object')
          t.type(res.body.testResults[0].errored, 'boolean')
        }
        t.equal(commitCount(s), before)
      })
      await t.test('POST with run-tests-only answers 204 when every test passes, and saves nothing', async (t) => {
        const before = commitCount(s)
        const res = await s.request(
          'POST',
          `${base}?run-tests-only=true`,
          withPassingTests(kind, `Contract.${kind}.Only`),
        )
        t.equal(res.status, 204, res.text)
        t.equal(commitCount(s), before)
        t.equal((await s.request('GET', `${base}/Contract.${kind}.Only`)).status, 404)
      })
      await t.test('POST with run-tests-only answers 400 when a test fails', async (t) => {
        const res = await s.request(
          'POST',
          `${base}?run-tests-only=true`,
          withFailingTest(kind, `Contract.${kind}.Only`),
        )
        t.equal(res.status, 400)
        t.ok(Array.isArray(res.body.testResults))
      })
      await t.test('POST with run-tests-first=false saves a rule whose tests fail', async (t) => {
        const res = await s.request(
          'POST',
          `${base}?run-tests-first=false`,
          withFailingTest(kind, `Contract.${kind}.Skipped`),
        )
        t.equal(res.status, 200, res.text)
      })
    } else {
      await t.test('a write that must run tests answers 501 naming the missing engine', async (t) => {
        const res = await s.request('POST', base, withPassingTests(kind, `Contract.${kind}.NoEngine`))
        t.equal(res.status, 501)
        t.match(res.body.message, /not available in this build/)
      })
    }

    await t.test('POST rejects bad booleans in the query', async (t) => {
      const res = await s.request('POST', `${base}?run-tests-first=yes`, SAMPLE_BODIES[kind](`Contract.${kind}.Q`))
      t.equal(res.status, 400)
    })

    await t.test('GET by id answers 200, and 404 for an unknown id', async (t) => {
      const ok = await s.request('GET', `${base}/Contract.${kind}.A`)
      t.equal(ok.status, 200)
      t.equal(ok.body.id, `Contract.${kind}.A`)
      const missing = await s.request('GET', `${base}/Contract.${kind}.Missing`)
      t.equal(missing.status, 404)
      t.type(missing.body.message, 'string')
    })

    await t.test('PUT answers 200 when the rule existed, and a no-op PUT makes no commit', async (t) => {
      const res = await s.request(
        'PUT',
        `${base}/Contract.${kind}.A?run-tests-first=false`,
        SAMPLE_BODIES[kind](`Contract.${kind}.A`, { description: 'changed' }),
      )
      t.equal(res.status, 200, res.text)
      t.equal(res.body.description, 'changed')
      const before = commitCount(s)
      const again = await s.request(
        'PUT',
        `${base}/Contract.${kind}.A?run-tests-first=false`,
        SAMPLE_BODIES[kind](`Contract.${kind}.A`, { description: 'changed' }),
      )
      t.equal(again.status, 200)
      t.equal(commitCount(s), before)
    })

    await t.test('GET → PUT of the same object round-trips without changes', async (t) => {
      const got = await s.request('GET', `${base}/Contract.${kind}.A`)
      const before = commitCount(s)
      const res = await s.request('PUT', `${base}/Contract.${kind}.A?run-tests-first=false`, got.body)
      t.equal(res.status, 200, res.text)
      t.equal(commitCount(s), before)
    })

    await t.test('PUT answers 201 when the rule did not exist', async (t) => {
      const res = await s.request(
        'PUT',
        `${base}/Contract.${kind}.B?run-tests-first=false`,
        SAMPLE_BODIES[kind](`Contract.${kind}.B`),
      )
      t.equal(res.status, 201, res.text)
    })

    await t.test('PUT answers 400 when the body id differs from the path id', async (t) => {
      const res = await s.request('PUT', `${base}/Contract.${kind}.B`, SAMPLE_BODIES[kind]('Some.Other.Id'))
      t.equal(res.status, 400)
      t.equal(res.body.errors[0].path, '/id')
    })

    await t.test('PUT answers 409 when the id belongs to another kind', async (t) => {
      const res = await s.request(
        'PUT',
        `${base}/Held.By.${other}?run-tests-first=false`,
        SAMPLE_BODIES[kind](`Held.By.${other}`),
      )
      t.equal(res.status, 409)
      t.match(res.body.message, new RegExp(`a ${other} rule`))
    })

    await t.test('an id with a slash works when encoded', async (t) => {
      const res = await s.request(
        'PUT',
        `${base}/Team%2FRule.One?run-tests-first=false`,
        SAMPLE_BODIES[kind]('Team/Rule.One'),
      )
      t.equal(res.status, 201, res.text)
      t.equal((await s.request('GET', `${base}/Team%2FRule.One`)).body.id, 'Team/Rule.One')
      t.equal((await s.request('DELETE', `${base}/Team%2FRule.One`)).status, 204)
    })

    await t.test('DELETE answers 204, then 404', async (t) => {
      const own = (f: string) => f.startsWith(`${def.folder}/contract/Contract.${kind}.B.`)
      t.ok(treeFiles(s).some(own), 'the rule has its file before')
      const res = await s.request('DELETE', `${base}/Contract.${kind}.B`)
      t.equal(res.status, 204)
      t.same(treeFiles(s).filter(own), [], 'its files (and companion) are gone')
      t.equal((await s.request('GET', `${base}/Contract.${kind}.B`)).status, 404)
      t.equal((await s.request('DELETE', `${base}/Contract.${kind}.B`)).status, 404)
    })

    await t.test('401 without a token, 403 with a view-only token on writes', async (t) => {
      const viewer = await s.makeToken('viewer', ['View Rules'])
      const anon = await s.request('GET', base, undefined, { 'X-API-Key': '' })
      t.equal(anon.status, 401)
      const wrong = await s.request('GET', base, undefined, { 'X-API-Key': 'rk_nope' })
      t.equal(wrong.status, 401)
      t.equal((await s.request('GET', base, undefined, { 'X-API-Key': viewer })).status, 200)
      for (const [m, p] of [
        ['POST', base],
        ['PUT', `${base}/X`],
        ['DELETE', `${base}/X`],
      ] as const) {
        const res = await s.request(m, p, SAMPLE_BODIES[kind]('X'), { 'X-API-Key': viewer })
        t.equal(res.status, 403, `${m} ${p}`)
      }
    })

    await t.test('413 for a body over api.maxBodyBytes, 415 for a body that is not JSON', async (t) => {
      const huge = { ...SAMPLE_BODIES[kind]('Big'), description: 'x'.repeat(1_100_000) }
      t.equal((await s.request('POST', base, huge)).status, 413)
      const res = await s.request('POST', base, 'id=x', { 'Content-Type': 'application/x-www-form-urlencoded' })
      t.equal(res.status, 415)
      t.type(res.body.message, 'string')
    })
  })
}

t.test('a kind without a test engine answers 501 on writes that must run tests, and saves without tests', async (t) => {
  const s = await startInProcess({ engines: {} })
  t.teardown(() => s.close())
  const res = await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('NoEngine.One'))
  t.equal(res.status, 501)
  t.match(res.body.message, /simple-rule .* not available in this build/)
  const skipped = await s.request('POST', '/simple-rules?run-tests-first=false', SAMPLE_BODIES.simple('NoEngine.One'))
  t.equal(skipped.status, 200)
  const noTests = await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('NoEngine.Two', { tests: [] }))
  t.equal(noTests.status, 200)
})

t.test('on the databricks backend every correlation route answers 501 after auth; other kinds work', async (t) => {
  const s = await startInProcess({ env: { RULEKEEPER_BACKEND: 'databricks' } })
  t.teardown(() => s.close())
  for (const [m, p] of [
    ['GET', '/correlation-rules'],
    ['GET', '/correlation-rules/X'],
    ['POST', '/correlation-rules'],
    ['PUT', '/correlation-rules/X'],
    ['DELETE', '/correlation-rules/X'],
  ] as const) {
    const res = await s.request(m, p, m === 'POST' || m === 'PUT' ? SAMPLE_BODIES.correlation('X') : undefined)
    t.equal(res.status, 501, `${m} ${p}`)
    t.equal(res.body.message, 'correlation rules are not available on the databricks backend')
  }
  t.equal((await s.request('GET', '/correlation-rules', undefined, { 'X-API-Key': '' })).status, 401)
  t.equal((await s.request('GET', '/simple-rules')).status, 200)
})

t.test('include-python returns pythonBody (the generated module) on list and get, and only then', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const list = await s.request('GET', '/simple-rules?include-python=true')
  t.equal(list.status, 200)
  const items = list.body.results
  t.ok(Array.isArray(items) && items.length > 0, 'the list has simple rules')
  for (const item of items) t.match(item.pythonBody, /def rule\(event\)/, `${item.id}: pythonBody in the list`)
  const one = await s.request('GET', '/simple-rules/Editor.Audit.LoginFailed?include-python=true')
  t.equal(one.status, 200)
  t.type(one.body.pythonBody, 'string')
  t.match(one.body.pythonBody, /def rule\(event\)/)
  const plain = await s.request('GET', '/simple-rules/Editor.Audit.LoginFailed')
  t.notOk('pythonBody' in plain.body, 'absent without the flag')
  const plainList = await s.request('GET', '/simple-rules')
  const plainItems = plainList.body.results
  for (const item of plainItems) t.notOk('pythonBody' in item, 'absent from the list without the flag')
  t.equal((await s.request('GET', '/simple-rules?include-python=maybe')).status, 400)
})

// Every kind whose rule is a Python module (its companion file): scheduled and Python streaming rules.
for (const def of KINDS.filter((k) => k.companion)) {
  const kind = def.name
  const base = PATHS[kind]
  t.test(
    `${kind} rules: no python3 → 503 with a message; a module that does not import → 400 at /body with its line`,
    async (t) => {
      const noPython = await startInProcess({ config: { python: { command: 'no-such-python3-here' } } })
      t.teardown(() => noPython.close())
      const res = await noPython.request('POST', base, withPassingTests(kind, 'Py.Missing'))
      t.equal(res.status, 503, res.text)
      t.match(res.body.message, /no-such-python3-here/)
      t.equal(
        noPython.git('log', '--format=%s', '-1').trim(),
        'Initialize rules repository from template',
        'nothing saved',
      )

      const s = await startInProcess()
      t.teardown(() => s.close())
      const broken = await s.request(
        'POST',
        `${base}?run-tests-first=false`,
        SAMPLE_BODIES[kind]('Py.Broken', { body: 'import os\n\ndef rule(event)\n    return True\n' }),
      )
      t.equal(broken.status, 400, broken.text)
      t.equal(broken.body.errors[0].path, '/body')
      t.equal(broken.body.errors[0].line, 3)
      const noRule = await s.request(
        'POST',
        `${base}?run-tests-first=false`,
        SAMPLE_BODIES[kind]('Py.NoRule', { body: 'def title(event):\n    return "x"\n' }),
      )
      t.equal(noRule.status, 400, noRule.text)
      t.match(noRule.body.errors[0].message, /rule/)
    },
  )
}
