// Each door out of the event tables, tried and refused: other files (/etc, the token file, a
// sibling folder by path or through a view, glob), the network, extensions (INSTALL, LOAD),
// ATTACH, COPY ... TO (even into the events folder), SET/PRAGMA lifting a limit, several
// statements, DDL; a query that never ends is interrupted at the time limit and one past the
// memory limit fails with DuckDB's message, and the engine answers the next query either way.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { DEFAULT_QUERY_SETTINGS } from '../../src/query/config.js'
import { QueryEngine } from '../../src/query/query-engine.js'
import { editorAuditLogType } from '../../src/ingest/editor-audit-log-type.js'
import { tempDir } from '../helpers/rulekeeper.js'
import { writeEvents } from './stored.js'

const dataDir = tempDir()
const logsRoot = path.join(dataDir, 'logs')
writeEvents(logsRoot, [{ at: '2026-11-20T08:01:00.000Z', role: 'admin' }])
fs.writeFileSync(path.join(dataDir, 'tokens.json'), '[{"id":"tok_secret"}]')
fs.mkdirSync(path.join(logsRoot, '_rejected'), { recursive: true })
fs.writeFileSync(path.join(logsRoot, '_rejected', 'r.ndjson'), '{"raw":"secret"}\n')

const open = (settings: Partial<typeof DEFAULT_QUERY_SETTINGS> = {}) =>
  QueryEngine.open({ logsRoot, logTypes: [editorAuditLogType], settings: { ...DEFAULT_QUERY_SETTINGS, ...settings } })
const run = (e: QueryEngine, sql: string) => e.run({ sql, nowMs: Date.now(), offset: 0, limit: 10 })

t.test('every door is refused with a 400 naming why, and the engine keeps answering', async (t) => {
  const e = await open()
  t.teardown(() => e.close())
  const tokens = path.join(dataDir, 'tokens.json')
  const doors: Array<[string, string, RegExp]> = [
    ['read_csv of /etc/passwd', "SELECT * FROM read_csv('/etc/passwd')", /Permission Error/],
    ['read_text of the token file', `SELECT * FROM read_text('${tokens}')`, /Permission Error/],
    [
      'read_text through ..',
      `SELECT * FROM read_text('${logsRoot}/Editor.Audit/../../tokens.json')`,
      /Permission Error/,
    ],
    [
      'read_json of the rejected folder',
      `SELECT * FROM read_json('${logsRoot}/_rejected/*.ndjson')`,
      /Permission Error/,
    ],
    ['glob of the data directory', `SELECT * FROM glob('${dataDir}/*')`, /Permission Error/],
    ['sniff_csv', "SELECT * FROM sniff_csv('/etc/passwd')", /Permission Error/],
    ['the network', "SELECT * FROM read_json('https://example.com/x.json')", /Permission Error|disabled/],
    ['INSTALL httpfs', 'INSTALL httpfs', /only SELECT/],
    ['LOAD httpfs', 'LOAD httpfs', /only SELECT/],
    ['ATTACH a file', `ATTACH '${dataDir}/x.db' AS x`, /only SELECT/],
    ['ATTACH in memory', "ATTACH ':memory:' AS x", /only SELECT/],
    ['COPY ... TO the events folder', `COPY (SELECT 1) TO '${logsRoot}/Editor.Audit/x.csv'`, /only SELECT/],
    ['SET enable_external_access', 'SET enable_external_access = true', /only SELECT/],
    ['SET memory_limit', "SET memory_limit = '10GB'", /only SELECT/],
    ['PRAGMA memory_limit', "PRAGMA memory_limit = '10GB'", /only SELECT/],
    ['RESET', 'RESET lock_configuration', /only SELECT/],
    [
      'a view over another folder',
      `CREATE VIEW v AS SELECT * FROM read_text('${tokens}')`,
      /Permission Error|only SELECT/,
    ],
    ['a view over nothing forbidden', 'CREATE VIEW v AS SELECT 1', /only SELECT/],
    ['replacing an event view', 'CREATE OR REPLACE VIEW editor_audit AS SELECT 1 AS x', /only SELECT/],
    ['a macro', 'CREATE MACRO m(x) AS x', /only SELECT/],
    ['two statements', "SELECT 1; SET memory_limit = '10GB'", /one SQL statement/],
    [
      'query() running COPY',
      `SELECT * FROM query('COPY (SELECT 1) TO ''${logsRoot}/Editor.Audit/y.csv''')`,
      /SELECT statement/,
    ],
    ['getenv', "SELECT getenv('HOME')", /getenv/],
  ]
  for (const [name, sql, message] of doors) {
    const err = await run(e, sql).then(
      () => undefined,
      (x: unknown) => x,
    )
    t.match(err, { status: 400, message }, name)
  }
  t.notOk(fs.existsSync(path.join(logsRoot, 'Editor.Audit', 'x.csv')), 'COPY wrote nothing')
  t.notOk(fs.existsSync(path.join(logsRoot, 'Editor.Audit', 'y.csv')), 'query() wrote nothing')
  t.notOk(fs.existsSync(path.join(dataDir, 'x.db')), 'ATTACH made no file')
  const settings = await run(
    e,
    "SELECT current_setting('enable_external_access') AS ext, current_setting('lock_configuration') AS locked",
  )
  t.same(settings.rows, [{ ext: false, locked: true }], 'still locked down')
  t.same((await run(e, 'SELECT count(*) AS n FROM editor_audit')).rows, [{ n: 1 }], 'the events still read')
})

t.test('a query that never ends is interrupted at the time limit', async (t) => {
  const e = await open({ timeoutMs: 300 })
  t.teardown(() => e.close())
  const started = performance.now()
  await t.rejects(run(e, 'WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT count(*) FROM r'), {
    status: 400,
    message: /time limit of 300 ms/,
  })
  await t.rejects(run(e, 'SELECT count(*) FROM range(1000000) a, range(1000000) b'), {
    status: 400,
    message: /time limit/,
  })
  // wait: the bound is the point — interrupted well before the query could finish on its own
  t.ok(performance.now() - started < 20_000, 'both stopped near their limit')
  t.same((await run(e, 'SELECT 42 AS x')).rows, [{ x: 42 }], 'the engine answers the next query')
})

t.test('a query past the memory limit fails with DuckDB’s message and nothing else suffers', async (t) => {
  const e = await open({ memoryLimit: '100MB', timeoutMs: 60_000 })
  t.teardown(() => e.close())
  await t.rejects(run(e, 'SELECT list(i) FROM range(50000000) t(i)'), { status: 400, message: /Out of Memory/ })
  t.same((await run(e, 'SELECT 42 AS x')).rows, [{ x: 42 }])
})
