// Runs a prepared query on DuckDB's own worker threads. `stream()` would execute the query's tasks
// on a libuv thread of the process — shared with file I/O and unable to take a lower priority —
// so the query is started and its state polled (`pending_execute_check_state` executes nothing)
// until DuckDB's workers are done; then its result streams as `stream()`'s would.
import type { DuckDBPreparedStatement, DuckDBResult } from '@duckdb/node-api'
import duckdb from '@duckdb/node-bindings'

/** The longest pause between two looks at the query's state (ms). */
const MAX_POLL_MS = 10

/** `prepared.stream()`, with the work done by DuckDB's worker threads (the instance needs threads ≥ 2). */
export async function streamOnWorkers(prepared: DuckDBPreparedStatement): Promise<DuckDBResult> {
  const pending = prepared.startStream()
  // node-api keeps the C handle private and offers no state check that leaves the work to DuckDB.
  const handle = (pending as unknown as { pending_result: duckdb.PendingResult }).pending_result
  let pause = 1
  for (;;) {
    const state = duckdb.pending_execute_check_state(handle)
    // ERROR also means "execution finished" (DuckDB's C API); getResult raises the error if there is one.
    if (state === duckdb.PendingState.RESULT_READY || state === duckdb.PendingState.ERROR) break
    await new Promise((resolve) => setTimeout(resolve, pause)) // wait: polling DuckDB's state, the only signal it gives
    pause = Math.min(pause * 2, MAX_POLL_MS)
  }
  return pending.getResult()
}
