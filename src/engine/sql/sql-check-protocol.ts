// The messages between the SQL checker (sql-check.ts) and its process (sql-check-process.ts), over
// Node's IPC channel as JSON: the setup statements of the empty tables once, then one check at a time.
export interface SqlProblem {
  message: string
  line?: number
  column?: number
  /** The preparation itself was stopped at a limit (time, memory) or ended the checking process. */
  stopped?: 'time' | 'memory' | 'crash'
}

export type CheckRequest =
  | { type: 'setup'; setup: string[] }
  | { type: 'check'; id: number; sql: string; nowMs: number }

export type CheckReply = { type: 'ready' } | { type: 'checked'; id: number; problem?: SqlProblem }
