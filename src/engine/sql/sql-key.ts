// Which key of a scheduled or saved query file holds the SQL this service checks and runs: `Query`,
// else `SnowflakeQuery` (Snowflake SQL too; its macros and path access are rewritten the same way).
// An `AthenaQuery` alone is neither checked nor run (the query kinds' engine warns about it).

/** The SQL keys of the format, in the order one is picked. */
const SQL_KEYS = ['Query', 'SnowflakeQuery'] as const

/** The key holding the SQL this service runs and checks, or undefined (AthenaQuery only, or none). */
export function sqlKeyOf(data: Readonly<Record<string, unknown>>): string | undefined {
  return SQL_KEYS.find((k) => typeof data[k] === 'string')
}
