// The seam scheduled runs will use: `runScheduledQuery(name, now)` finds a scheduled or saved query
// by its QueryName (through the lookup handed in: the published rules index), runs its SQL with
// the macros relative to `now` (the scheduled slot, as Panther expands them) under the query's
// TimeoutMinutes, and answers its rows with lower-cased column names (a scheduled rule's event).
import { badRequest, notFound } from '../errors.js'
import { isPlainObject } from '../is-plain-object.js'
import type { SupportFile } from '../rules/model.js'
import { type JsonValue, setColumn } from './json-values.js'
import type { QueryEngine } from './query-engine.js'
import { sqlKeyOf } from '../engine/sql/sql-key.js'

export interface ScheduledQuery {
  name: string
  sql: string
  enabled: boolean
  /** Schedule.TimeoutMinutes in ms, or undefined for the configured limit. */
  timeoutMs: number | undefined
}

/** Rows one scheduled run reads at most (more are cut; the run's caller records that it was cut). */
export const MAX_SCHEDULED_ROWS = 10_000

/** The query a `scheduled_query` / `saved_query` file describes, or undefined for another file. */
export function scheduledQueryOf(file: SupportFile): ScheduledQuery | undefined {
  if (file.analysisType !== 'scheduled_query' && file.analysisType !== 'saved_query') return undefined
  const { QueryName, Enabled, Schedule } = file.data
  const key = sqlKeyOf(file.data)
  if (typeof QueryName !== 'string' || key === undefined) return undefined
  const minutes = isPlainObject(Schedule) ? Schedule.TimeoutMinutes : undefined
  return {
    name: QueryName,
    sql: file.data[key] as string,
    enabled: Enabled !== false,
    timeoutMs: typeof minutes === 'number' && minutes > 0 ? minutes * 60_000 : undefined,
  }
}

export class ScheduledQueries {
  constructor(
    private readonly engine: Pick<QueryEngine, 'run'> & Partial<Pick<QueryEngine, 'interruptAll'>>,
    private readonly lookup: (name: string) => SupportFile | undefined,
  ) {}

  /** Interrupts the queries running now (shutdown). */
  interrupt(): void {
    this.engine.interruptAll?.()
  }

  /**
   * The rows of one run of the named query at `nowMs`, keys lower-cased; at most MAX_SCHEDULED_ROWS.
   * `timeoutMs` overrides the query's own limit (the scheduler's shortened minutes in tests).
   */
  async runScheduledQuery(
    name: string,
    nowMs: number,
    timeoutMs?: number,
  ): Promise<{ rows: Array<Record<string, JsonValue>>; cut: boolean }> {
    const file = this.lookup(name)
    const query = file && scheduledQueryOf(file)
    if (!query) throw notFound(`no scheduled or saved query is named ${name}`)
    if (!query.enabled) throw badRequest(`the query ${name} is disabled`)
    const page = await this.engine.run({
      sql: query.sql,
      nowMs,
      offset: 0,
      limit: MAX_SCHEDULED_ROWS,
      timeoutMs: timeoutMs ?? query.timeoutMs,
      waitForPlace: true,
    })
    const rows = page.rows.map((row) => {
      const event: Record<string, JsonValue> = {}
      for (const [k, v] of Object.entries(row)) setColumn(event, k.toLowerCase(), v)
      return event
    })
    return { rows, cut: page.more }
  }
}
