// The SQL checker's own process (sql-check.ts starts it, one per checker): a small DuckDB of its own
// (one thread, 64 MB, no file access, each table an empty view of its columns) that prepares SQL on
// request and answers what is wrong with it. It runs nothing; its one cost is DuckDB's preparation
// (constant folding included), which the parent bounds in time and memory by killing this process.
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api'
import { RulekeeperError } from '../../errors.js'
import { prepareSelect } from './prepare-select.js'
import type { CheckReply, CheckRequest } from './sql-check-protocol.js'

async function open(setup: readonly string[]): Promise<DuckDBConnection> {
  const instance = await DuckDBInstance.create(':memory:', {
    threads: '1',
    memory_limit: '64MB',
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    temp_directory: '',
  })
  const conn = await instance.connect()
  for (const stmt of setup) await conn.run(stmt)
  await conn.run('SET enable_external_access = false')
  await conn.run('SET lock_configuration = true')
  return conn
}

async function answer(conn: DuckDBConnection, req: Extract<CheckRequest, { type: 'check' }>): Promise<CheckReply> {
  try {
    ;(await prepareSelect(conn, req.sql, req.nowMs)).destroySync()
    return { type: 'checked', id: req.id }
  } catch (err) {
    if (!(err instanceof RulekeeperError)) return { type: 'checked', id: req.id, problem: { message: String(err) } }
    const { line, column } = err.body as { line?: number; column?: number }
    const problem = { message: err.message, ...(line !== undefined ? { line } : {}), ...(column ? { column } : {}) }
    return { type: 'checked', id: req.id, problem }
  }
}

let conn: Promise<DuckDBConnection> | undefined
let chain: Promise<unknown> = Promise.resolve()
const send = (reply: CheckReply) => process.send?.(reply)

process.on('message', (req: CheckRequest) => {
  // One request at a time, in order.
  chain = chain.then(async () => {
    if (req.type === 'setup') {
      conn = open(req.setup)
      await conn
      send({ type: 'ready' })
    } else if (conn) send(await answer(await conn, req))
  })
  chain = chain.catch((err: unknown) => {
    process.stderr.write(`sql check process: ${err instanceof Error ? err.message : String(err)}\n`)
    process.exit(1)
  })
})
// The parent gone: nothing left to answer.
process.on('disconnect', () => process.exit(0))
