// Values that are not JSON-safe, converted the same way every time (docs/queries.md): each DuckDB
// type through the real engine (and the byte count a page's limit adds up for it), and the
// `queries:` config section's checks.
import path from 'node:path'
import t from 'tap'
import { editorAuditLogType } from '../../src/ingest/editor-audit-log-type.js'
import { checkQueryConfig, DEFAULT_QUERY_SETTINGS, querySettings } from '../../src/query/config.js'
import { jsonSize } from '../../src/query/json-values.js'
import { QueryEngine } from '../../src/query/query-engine.js'
import { tempDir } from '../helpers/rulekeeper.js'

t.test('each type as JSON', async (t) => {
  const e = await QueryEngine.open({
    logsRoot: path.join(tempDir(), 'logs'),
    logTypes: [editorAuditLogType],
    settings: DEFAULT_QUERY_SETTINGS,
  })
  t.teardown(() => e.close())
  const one = async (expr: string) =>
    (await e.run({ sql: `SELECT ${expr} AS v`, nowMs: 0, offset: 0, limit: 1 })).rows[0]!.v
  const cases: Array<[string, unknown]> = [
    ['42::TINYINT', 42],
    ['9007199254740991::BIGINT', 9007199254740991],
    ['9007199254740993::BIGINT', '9007199254740993'],
    ['(-9223372036854775807 - 1)::BIGINT', '-9223372036854775808'],
    ['170141183460469231731687303715884105727::HUGEINT', '170141183460469231731687303715884105727'],
    ['18446744073709551615::UBIGINT', '18446744073709551615'],
    ['12::DECIMAL(38,0)', 12],
    ['1.50::DECIMAL(10,2)', '1.50'],
    ['0.1::DOUBLE', 0.1],
    ["'nan'::DOUBLE", 'NaN'],
    ["'-inf'::DOUBLE", '-Infinity'],
    ["DATE '2026-11-20'", '2026-11-20'],
    ["TIMESTAMP '2026-11-20 08:01:12.31'", '2026-11-20T08:01:12.310Z'],
    ["TIMESTAMP '2026-11-20 08:01:12.310123'", '2026-11-20T08:01:12.310123Z'],
    ["TIMESTAMPTZ '2026-11-20 08:01:12+02'", '2026-11-20T06:01:12.000Z'],
    ["TIMESTAMP_MS '2026-11-20 08:01:12.5'", '2026-11-20T08:01:12.500Z'],
    ["TIMESTAMP_S '2026-11-20 08:01:12'", '2026-11-20T08:01:12.000Z'],
    ["'infinity'::TIMESTAMP", 'infinity'],
    ["'\\xAA\\x00'::BLOB", Buffer.from([0xaa, 0]).toString('base64')],
    ["{'a': 1, 'b': [1, 2]}", { a: 1, b: [1, 2] }],
    ['[1, NULL, 3]', [1, null, 3]],
    ['[1, 2]::INTEGER[2]', [1, 2]],
    [
      "MAP {'k': 1, 'j': 2}",
      [
        { key: 'k', value: 1 },
        { key: 'j', value: 2 },
      ],
    ],
    ['MAP {1: 2}', [{ key: 1, value: 2 }]],
    ['\'{"x": [1, {"y": null}]}\'::JSON', { x: [1, { y: null }] }],
    ["'00000000-0000-0000-0000-000000000001'::UUID", '00000000-0000-0000-0000-000000000001'],
    ["TIME '08:01:02'", '08:01:02'],
    ['true', true],
    ['NULL', null],
  ]
  for (const [expr, want] of cases) {
    const got = await one(expr)
    t.same(got, want, expr)
    t.equal(
      jsonSize(got ?? null),
      Buffer.byteLength(JSON.stringify(got ?? null)),
      `${expr}: the page's byte count is its JSON's`,
    )
  }
  t.equal(jsonSize({ é: ['ü', 1.5, false, null] }), Buffer.byteLength(JSON.stringify({ é: ['ü', 1.5, false, null] })))
  // Escapes count: a string of quotes or control characters is up to six times its length as JSON.
  for (const v of ['"'.repeat(100), '\u0001'.repeat(100), 'a\\b\nc\td😀', { 'k"\u0002': ['x"', '\r'] }])
    t.equal(jsonSize(v), Buffer.byteLength(JSON.stringify(v)), `${JSON.stringify(v).slice(0, 30)}: escapes counted`)
})

t.test('the queries: config section', async (t) => {
  t.same(checkQueryConfig({}), [])
  t.same(checkQueryConfig({ queries: { memoryLimit: '1GB', threads: 1, timeoutMs: 5000, queue: 0 } }), [])
  const problems = checkQueryConfig({
    queries: { memoryLimit: 'lots', threads: 0, maxPageSize: 10, defaultPageSize: 20, maxPageBytes: 0, nope: 1 },
  })
  t.same(problems.map((p) => p.path.join('.')).sort(), [
    'queries.defaultPageSize',
    'queries.maxPageBytes',
    'queries.memoryLimit',
    'queries.nope',
    'queries.threads',
  ])
  t.same(
    checkQueryConfig({ queries: { nice: 20 } }).map((p) => p.path.join('.')),
    ['queries.nice'],
  )
  t.same(checkQueryConfig({ queries: { nice: 0 } }), [])
  t.same(checkQueryConfig({ queries: { nice: 19 } }), [])
  t.equal(checkQueryConfig({ queries: { nice: -1 } })[0]?.message, 'must be a whole number from 0 to 19')
  t.equal(querySettings({}).nice, 10)
  t.equal(querySettings({ queries: { threads: 1 } }).threads, 1)
  t.equal(querySettings({}).timeoutMs, DEFAULT_QUERY_SETTINGS.timeoutMs)
})
