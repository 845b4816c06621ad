// A query interrupted at its time limit while its rows are streaming is a timeout, never a shorter
// result: DuckDB's stream can end early without an error when interrupted mid-way, which the engine
// once answered as the whole result (a scheduled query's run saw "0 rows, ok").
import t from 'tap'
import { editorAuditLogType } from '../../src/ingest/editor-audit-log-type.js'
import { DEFAULT_QUERY_SETTINGS } from '../../src/query/config.js'
import { QueryEngine } from '../../src/query/query-engine.js'
import { tempDir } from '../helpers/rulekeeper.js'

t.test('an interrupt in the middle of the rows is a timeout, every time', async (t) => {
  const e = await QueryEngine.open({
    logsRoot: tempDir('rk-interrupt-'),
    logTypes: [editorAuditLogType],
    settings: { ...DEFAULT_QUERY_SETTINGS, threads: 1 },
  })
  t.teardown(() => e.close())
  // Many rows, streamed chunk by chunk: the limit comes at different places in the stream.
  const sql = 'SELECT range AS k FROM range(4000000) WHERE range % 3 = 0'
  let timeouts = 0
  for (const timeoutMs of [10, 20, 30, 40, 50, 60, 80, 100]) {
    const outcome = await e.run({ sql, nowMs: Date.now(), offset: 0, limit: 1_000_000, timeoutMs }).then(
      (page) => `answered ${page.rows.length} rows`,
      (err: Error) => err.message,
    )
    t.match(outcome, /time limit/, `interrupted at ${timeoutMs} ms: ${outcome}`)
    if (/time limit/.test(outcome)) timeouts++
  }
  t.equal(timeouts, 8)
})
