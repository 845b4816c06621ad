// Replay (alerts.md §3): the rules of one revision over the stored records whose event time is in
// [from, to), in stored order, through the same evaluators and the same grouping as live detection,
// with nothing stored. Used by `POST /replay` and `rulekeeper replay` (which reads the data
// directory beside a running server or without one).
import { readdir, stat } from 'node:fs/promises'
import path from 'node:path'
import type { RuleIndex } from '../rules/rule-index.js'
import { eventTimeMs } from './event-time.js'
import { alertView, Grouper } from './grouping.js'
import { evaluateRecords } from './evaluate-records.js'
import type { LiveEngines } from '../engine/engine.js'
import { buildLiveIndex, type LiveRule } from './live-rules.js'
import { prefilterOfLiveRules } from './rule-prefilter.js'
import { chunkFor, LineCursor, listDataFiles, partitionsMeeting, type StoredRecord } from './stored-log.js'
import { StoredLogMerge } from './stored-merge.js'

export interface ReplayOptions {
  logsRoot: string
  index: RuleIndex
  /** The engines whose `live` members evaluate the records. */
  engines: LiveEngines
  /** The rules to run, enabled or not; absent: every enabled rule. */
  ruleIds?: readonly string[]
  fromMs: number
  toMs: number
  /** How far each file may be read (the server: its durable length); absent: the file's size. */
  durableLength?: (file: string) => number | undefined
  /** Stamps createdAt/updatedAt of the alerts (default: now). */
  now?: number
  /** The most stored bytes (data files of the hours that meet [from, to)) to read; more is refused. */
  maxBytes?: number
  /** Stops the replay (the caller went away): it rejects with the signal's reason. */
  signal?: AbortSignal
  /** Told the bytes read so far and in all (an estimate of the time left). */
  progress?: (read: number, total: number) => void
}

export interface ReplayResult {
  records: number
  matches: number
  alerts: Array<Record<string, unknown>>
}

/** Why a replay cannot run as asked (a 400 in the API, exit 2 in the CLI). */
export class ReplayRequestError extends Error {}

/** Records per evaluation chunk (live detection's commit batch). */
const CHUNK_RECORDS = 5000
const YIELD_EVERY = 4096
const mib = (n: number) => `${(n / 1024 ** 2).toFixed(n < 10 * 1024 ** 2 ? 1 : 0)} MiB`

/** The log types of the stored log: the folders of `logs/` except `_rejected` and hidden ones. */
async function storedLogTypes(logsRoot: string): Promise<string[]> {
  try {
    return (await readdir(logsRoot, { withFileTypes: true }))
      .filter((e) => e.isDirectory() && !e.name.startsWith('_') && !e.name.startsWith('.'))
      .map((e) => e.name)
      .sort()
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
}

export async function replay(o: ReplayOptions): Promise<ReplayResult> {
  if (!(o.fromMs < o.toMs)) throw new ReplayRequestError('from must be earlier than to')
  const wanted = o.ruleIds?.length ? new Set(o.ruleIds) : null
  if (wanted) {
    const unknown = [...wanted].filter((id) => !o.index.rules.has(id) || !o.engines[o.index.rules.get(id)!.kind]?.live)
    if (unknown.length)
      throw new ReplayRequestError(
        `no rule detection can run with id ${unknown
          .slice(0, 5)
          .map((id) => JSON.stringify(id.slice(0, 100)))
          .join(', ')} at this revision`,
      )
  }
  const live = buildLiveIndex(o.index, o.engines, wanted ? (rule) => wanted.has(rule.id) : undefined)
  // Data files are partitioned by event hour: only the hours that meet [from, to) are read.
  const keep = partitionsMeeting(o.fromMs, o.toMs)

  const files: Array<[string, number]> = []
  for (const lt of await storedLogTypes(o.logsRoot))
    for (const file of await listDataFiles(o.logsRoot, lt, keep)) {
      const size = o.durableLength?.(file) ?? (await stat(path.join(o.logsRoot, file))).size
      if (size > 0) files.push([file, size])
    }
  const total = files.reduce((n, [, size]) => n + size, 0)
  if (o.maxBytes !== undefined && total > o.maxBytes)
    throw new ReplayRequestError(
      `[from, to) covers ${mib(total)} of stored records, more than a replay may read (${mib(o.maxBytes)}): narrow the range`,
    )
  const chunk = chunkFor(files.length)
  const cursors = files.map(
    ([file, size]) =>
      new LineCursor(o.logsRoot, file, 0, size, chunk, live.byLogType.has(file.split('/')[0]!) ? 'eager' : 'lazy'),
  )
  const grouper = new Grouper()
  const now = o.now ?? Date.now()
  let records = 0
  let matches = 0
  // Evaluated in chunks, as live detection does: the batch rules' worker runs first, then the
  // grouping pass in stored order. With no batch rule, each record is evaluated as it is read.
  const direct = live.batched.length === 0
  // Direct evaluation meets a record only with the rules its values allow (rule-prefilter.ts).
  const prefilters = new Map([...live.byLogType].map(([lt, rules]) => [lt, prefilterOfLiveRules(rules)]))
  let batch: Array<{ rec: StoredRecord; eventMs: number; rules: LiveRule[] }> = []
  const evaluate = async () => {
    if (batch.length === 0) return
    const evaluations = await evaluateRecords(
      live,
      batch.map((c) => c.rec),
      o.signal,
    )
    o.signal?.throwIfAborted()
    batch.forEach(({ rec, eventMs, rules }, i) => {
      const record = rec.record
      for (const rule of rules) {
        const out = evaluations.of(rule, i, record)
        if (!('matched' in out) || !out.matched) continue
        matches++
        if (rule.meta.createAlert) grouper.add(rule.meta, out, eventMs, record, now)
      }
    })
    batch = []
  }
  // The merge is synchronous between reads: no promise per record. Every YIELD_EVERY records the
  // replay lets other work run (a server answers requests and ingests meanwhile).
  const merge = new StoredLogMerge(cursors)
  let bytes = 0
  let sinceYield = 0
  try {
    while (await merge.read()) {
      for (let rec = merge.next(); rec !== null; rec = merge.next()) {
        bytes += rec.next - rec.offset
        if (++sinceYield >= YIELD_EVERY) {
          sinceYield = 0
          o.progress?.(bytes, total)
          await new Promise<void>((resolve) => setImmediate(resolve))
          o.signal?.throwIfAborted()
        }
        const eventMs = eventTimeMs(rec.eventTime)
        if (!(eventMs >= o.fromMs && eventMs < o.toMs)) continue
        records++
        const rules = live.byLogType.get(rec.logType)
        if (!rules || !rec.readable) continue // a damaged line: no rule sees it (live detection skips it too)
        if (!direct) {
          batch.push({ rec, eventMs, rules })
          if (batch.length >= CHUNK_RECORDS) {
            await evaluate()
            o.signal?.throwIfAborted()
          }
          continue
        }
        const record = rec.record
        for (const k of prefilters.get(rec.logType)!.candidates(record)) {
          const { meta, evaluate } = rules[k]!
          const out = evaluate!(record)
          if (!('matched' in out) || !out.matched) continue
          matches++
          if (meta.createAlert) grouper.add(meta, out, eventMs, record, now)
        }
      }
    }
    await evaluate()
  } finally {
    await merge.close()
  }
  const alerts = [...grouper.groups.values()]
    .filter((g) => g.alert)
    .sort((a, b) =>
      a.firstEventTime !== b.firstEventTime ? (a.firstEventTime < b.firstEventTime ? -1 : 1) : a.id < b.id ? -1 : 1,
    )
    .map(alertView)
  return { records, matches, alerts }
}
