// Partition pruning from the time macros: a file that cannot be read sits in an hour outside the
// window, so a query reads it only if the hour partitions are not pruned. Also the view switch
// from "nothing stored yet" (no rows, same columns) to the stored files.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { editorAuditLogType } from '../../src/ingest/editor-audit-log-type.js'
import { DEFAULT_QUERY_SETTINGS } from '../../src/query/config.js'
import { QueryEngine } from '../../src/query/query-engine.js'
import { tempDir } from '../helpers/rulekeeper.js'
import { writeEvents } from './stored.js'

t.test('the macros prune hour partitions; without them the bad file is read', async (t) => {
  const logsRoot = path.join(tempDir(), 'logs')
  const e = await QueryEngine.open({ logsRoot, logTypes: [editorAuditLogType], settings: DEFAULT_QUERY_SETTINGS })
  t.teardown(() => e.close())
  const run = (sql: string) => e.run({ sql, nowMs: Date.parse('2026-11-20T10:30:00Z'), offset: 0, limit: 10 })
  t.same((await run('SELECT count(*) AS n FROM editor_audit')).rows, [{ n: 0 }], 'nothing stored: no rows')
  writeEvents(logsRoot, [
    { at: '2026-11-20T09:45:00.000Z', role: 'admin' },
    { at: '2026-11-20T10:10:00.000Z', role: 'admin' },
  ])
  const badDir = path.join(logsRoot, 'Editor.Audit', 'dt=2026-11-20', 'hour=03')
  fs.mkdirSync(badDir, { recursive: true })
  fs.writeFileSync(path.join(badDir, 'x.ndjson'), '{"p_event_time": "not a time", \n')
  t.same((await run("SELECT count(*) AS n FROM editor_audit WHERE p_occurs_since('1 hour')")).rows, [{ n: 2 }])
  t.same(
    (
      await run(
        "SELECT count(*) AS n FROM editor_audit WHERE p_occurs_between('2026-11-20 10:00:00', '2026-11-20 11:00:00')",
      )
    ).rows,
    [{ n: 1 }],
  )
  await t.rejects(run("SELECT count(*) FROM editor_audit WHERE p_event_time >= TIMESTAMP '2026-11-20 09:30:00'"), {
    name: 'RulekeeperError',
    message: /Conversion Error|Invalid Input|Error/,
  })
  // An alias naming a derived table without the partition columns: the macro still filters.
  t.same(
    (
      await run(
        "SELECT count(*) AS n FROM (SELECT p_event_time FROM editor_audit WHERE p_date = DATE '2026-11-20' AND p_hour >= 9) s WHERE p_occurs_since('1 hour', s)",
      )
    ).rows,
    [{ n: 2 }],
  )
})
