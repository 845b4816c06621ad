// The `queries:` config section: what one query over the stored events may use (DuckDB's memory
// limit and threads, a time limit after which it is interrupted), how many run and wait at once,
// and the size of a request (SQL bytes, rows and bytes per page). `querySettings` fills in the defaults.
import os from 'node:os'
import { type ConfigProblem, unknownKeys } from '../config/problems.js'
import { isPlainObject } from '../is-plain-object.js'

export interface QuerySettings {
  /** DuckDB's memory_limit for the whole engine, e.g. `512MB`; a query past it fails with a clear error. */
  memoryLimit: string
  /**
   * DuckDB's worker threads (shared by every query). Default: one fewer than the cores, at least 1 —
   * on 2 cores, 2 DuckDB threads stalled the event loop 165 ms, 1 thread 62 ms (idle: 34 ms).
   */
  threads: number
  /**
   * The nice value of DuckDB's worker threads (Linux; 0 keeps the process's priority, 19 is the
   * lowest): on busy cores ingest, detection and the API run first. Default 10 — on 2 cores, ingest
   * kept 0.70–1.02× of its rate during back-to-back heavy queries, against 0.39× at 0 (BENCHMARKS.md).
   */
  nice: number
  /** A query running longer is interrupted (POST /queries answers 400). */
  timeoutMs: number
  /** Queries running at once; each holds a libuv thread while DuckDB works. */
  concurrency: number
  /** Queries waiting for a place; one more is a 503 with Retry-After. */
  queue: number
  /** SQL text longer than this (UTF-8 bytes) is a 413. */
  maxSqlBytes: number
  /** Rows of one page when the request names no pageSize, and the most it may name. */
  defaultPageSize: number
  maxPageSize: number
  /**
   * A page's rows as JSON stop before this many bytes (the next page starts at the row left out);
   * the rows are converted on the JS thread, outside DuckDB's memory limit and interrupt.
   */
  maxPageBytes: number
  /**
   * Every query is first prepared in a process of its own (engine/sql/sql-check.ts): DuckDB evaluates
   * constant expressions while it prepares, beyond its memory limit and interrupt. A preparation past
   * this time, or growing that process past `prepareMemoryLimit`, is stopped and the query refused.
   */
  prepareTimeoutMs: number
  prepareMemoryLimit: string
}

export const DEFAULT_QUERY_SETTINGS: QuerySettings = {
  memoryLimit: '512MB',
  threads: Math.max(1, os.availableParallelism() - 1),
  nice: 10,
  timeoutMs: 30_000,
  concurrency: 2,
  queue: 8,
  maxSqlBytes: 64 * 1024,
  defaultPageSize: 100,
  maxPageSize: 1000,
  maxPageBytes: 8 * 1024 * 1024,
  prepareTimeoutMs: 2000,
  prepareMemoryLimit: '256MiB',
}

const UNITS: Record<string, number> = { kb: 1e3, mb: 1e6, gb: 1e9, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30 }
const SIZE = /^(\d+(?:\.\d+)?)\s*(KB|MB|GB|KiB|MiB|GiB)$/i

/** A size such as `512MB` or `2GiB` in bytes (DuckDB's units: MB is 1000², MiB 1024²). */
export function sizeBytes(text: string): number {
  const m = SIZE.exec(text)
  if (!m) throw new Error(`not a size: ${text}`)
  return Math.round(Number(m[1]) * UNITS[m[2]!.toLowerCase()]!)
}

const isWhole = (v: unknown, min: number) => typeof v === 'number' && Number.isSafeInteger(v) && v >= min

/** Every problem of the `queries:` section (config-sections.ts runs it with the others). */
export function checkQueryConfig(config: Record<string, unknown>): ConfigProblem[] {
  const q = config.queries
  if (q === undefined) return []
  if (!isPlainObject(q)) return [{ path: ['queries'], message: 'must be a map' }]
  const problems = unknownKeys(['queries'], q, Object.keys(DEFAULT_QUERY_SETTINGS))
  for (const [k, v] of Object.entries(q)) {
    if (!(k in DEFAULT_QUERY_SETTINGS)) continue
    if (k === 'memoryLimit' || k === 'prepareMemoryLimit') {
      if (typeof v !== 'string' || !SIZE.test(v))
        problems.push({ path: ['queries', k], message: 'must be a size such as 512MB or 2GiB' })
    } else if (k === 'nice') {
      if (!isWhole(v, 0) || (v as number) > 19)
        problems.push({ path: ['queries', k], message: 'must be a whole number from 0 to 19' })
    } else if (!isWhole(v, k === 'queue' ? 0 : 1))
      problems.push({
        path: ['queries', k],
        message: k === 'queue' ? 'must be a whole number, 0 or more' : 'must be a positive integer',
      })
  }
  if (
    isWhole(q.defaultPageSize, 1) &&
    isWhole(q.maxPageSize, 1) &&
    (q.defaultPageSize as number) > (q.maxPageSize as number)
  )
    problems.push({ path: ['queries', 'defaultPageSize'], message: 'must not exceed maxPageSize' })
  return problems
}

/** The settings of a checked configuration, defaults filled in. */
export function querySettings(config: Record<string, unknown>): QuerySettings {
  const q = isPlainObject(config.queries) ? config.queries : {}
  return { ...DEFAULT_QUERY_SETTINGS, ...(q as Partial<QuerySettings>) }
}
