// Replay (alerts.md §3): the rules of one revision over the stored records whose event time is in
// [from, to), in stored order, through the same evaluators and the same grouping as live detection,
// with nothing stored. Used by `POST /replay`, a preview and `rulekeeper replay` (which reads the
// data directory beside a running server or without one). What a replay holds is bounded: the groups
// it opens and their content, a preview's first events of each included (a 400 past either cap);
// without `content` no title, context or summary is kept at all (counts only); the alerts are built
// one by one as the answer is written.
import { stat } from 'node:fs/promises'
import path from 'node:path'
import type { RuleIndex } from '../rules/rule-index.js'
import { eventTimeMs } from './event-time.js'
import { alertView, type Group, Grouper, type MatchFields, type RuleMeta } from './grouping.js'
import { evaluateRecords } from './evaluate-records.js'
import type { LiveEngines } from '../engine/engine.js'
import type { Evaluation } from '../engine/live.js'
import { buildLiveIndex, type LiveRule } from './live-rules.js'
import { prefilterOfLiveRules } from './rule-prefilter.js'
import { chunkFor, LineCursor, listDataFiles, partitionsMeeting, type StoredRecord } from './stored-log.js'
import { StoredLogMerge } from './stored-merge.js'
import { replicaFolders } from '../ingest/events-layout.js'
import { listVisibleFolders } from '../dir-list.js'

export interface ReplayOptions {
  logsRoot: string
  /** `logsRoot` is a shared events directory: each of its folders is a replica's, laid out as `logs/` (all read). */
  eachReplica?: boolean
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
  /** The most alert groups (alerts and windows short of their threshold) to hold; more is refused. */
  maxGroups?: number
  /** The most alert content (title, dedup and alert context as JSON, per group) to hold; more is refused. */
  maxContentBytes?: number
  /** Keep the alerts' content (default); false: counts only (no title, context or summary is kept). */
  content?: boolean
  /** Keep the first this many events of each alert group (`sampleEvents`; within maxContentBytes); default none. */
  sampleEvents?: number
}

/** What one rule gave in a replay. */
export interface RuleCounts {
  ruleId: string
  /** Matches and signals. */
  matches: number
  /** Alerts that would be raised. */
  alerts: number
  /** Evaluations that raised an error (and a batch rule that could not run at all, once). */
  errors: number
}

export interface ReplayResult {
  records: number
  matches: number
  /** Every rule run, by id, with its counts. */
  rules: RuleCounts[]
  alertCount: number
  /** The alerts in order (first event time, then id), each built when reached; none without `content`. */
  alerts(): Iterable<Record<string, unknown>>
}

/** Why a replay cannot run as asked (a 400 in the API, exit 2 in the CLI). */
export class ReplayRequestError extends Error {}

/** Records per evaluation chunk (live detection's commit batch). */
const CHUNK_RECORDS = 5000
/** Records between looks at the clock, and the longest the replay runs before it lets other work run. */
const CLOCK_EVERY = 256
const YIELD_AFTER_MS = 10
const mib = (n: number) => `${(n / 1024 ** 2).toFixed(n < 10 * 1024 ** 2 ? 1 : 0)} MiB`
const sizeText = (n: number) => (n < 1024 ** 2 ? `${(n / 1024).toFixed(1)} KiB` : mib(n))
const EMPTY_CONTEXT: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>

/** A rule's meta without what only the alert content needs (summary attributes, texts). */
const countsOnly = (meta: RuleMeta): RuleMeta => ({
  ...meta,
  summaryAttributes: [],
  description: '',
  runbook: '',
  reference: '',
})

/** The JSON size of an alert context (a value JSON cannot write counts as its text). */
function jsonLength(v: unknown): number {
  try {
    return JSON.stringify(v)?.length ?? 0
  } catch {
    return String(v).length
  }
}

/** The log types of the stored log: the folders of `logs/` except `_rejected` and hidden ones. */
const storedLogTypes = listVisibleFolders

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

  // [file, size, log type (its folder's name)]
  const files: Array<[string, number, string]> = []
  const folders = o.eachReplica ? await replicaFolders(o.logsRoot) : ['']
  for (const folder of folders)
    for (const lt of await storedLogTypes(path.join(o.logsRoot, folder)))
      for (const file of await listDataFiles(o.logsRoot, folder ? `${folder}/${lt}` : lt, keep)) {
        const size = o.durableLength?.(file) ?? (await stat(path.join(o.logsRoot, file))).size
        if (size > 0) files.push([file, size, lt])
      }
  const total = files.reduce((n, [, size]) => n + size, 0)
  if (o.maxBytes !== undefined && total > o.maxBytes)
    throw new ReplayRequestError(
      `[from, to) covers ${mib(total)} of stored records, more than a replay may read (${mib(o.maxBytes)}): narrow the range`,
    )
  const chunk = chunkFor(files.length)
  const cursors = files.map(
    ([file, size, lt]) => new LineCursor(o.logsRoot, file, 0, size, chunk, live.byLogType.has(lt) ? 'eager' : 'lazy'),
  )
  const grouper = new Grouper()
  const now = o.now ?? Date.now()
  let records = 0
  let matches = 0
  const content = o.content !== false
  const counts = new Map<string, RuleCounts>()
  for (const rules of live.byLogType.values())
    for (const r of rules) counts.set(r.meta.id, { ruleId: r.meta.id, matches: 0, alerts: 0, errors: 0 })
  for (const r of live.batched) counts.set(r.meta.id, { ruleId: r.meta.id, matches: 0, alerts: 0, errors: 0 })
  const slimMeta = new Map<RuleMeta, RuleMeta>()
  let contentBytes = 0
  const samples = new Map<string, unknown[]>()
  const sampleMax = content ? (o.sampleEvents ?? 0) : 0
  /** The group's first events, counted against the content cap. */
  const keepSample = (groupId: string, record: unknown) => {
    if (sampleMax === 0) return
    const list = samples.get(groupId) ?? []
    if (list.length >= sampleMax) return
    list.push(record)
    samples.set(groupId, list)
    contentBytes += jsonLength(record)
    if (o.maxContentBytes !== undefined && contentBytes > o.maxContentBytes)
      throw new ReplayRequestError(
        `this replay would hold more than ${sizeText(o.maxContentBytes)} of alert content and sample events (config detection.replay.maxContentBytes): narrow the range`,
      )
  }
  /** One evaluation of a rule on a record: counted, and a match joins its group (bounded). */
  const take = (meta: RuleMeta, out: Evaluation, eventMs: number, record: unknown) => {
    const c = counts.get(meta.id)!
    if ('error' in out) {
      c.errors++
      return
    }
    if (!out.matched) return
    matches++
    c.matches++
    if (out.errors?.length) c.errors++
    if (!meta.createAlert) return
    const before = grouper.groups.size
    if (content) {
      const { group } = grouper.add(meta, out, eventMs, record, now)
      keepSample(group.id, record)
    } else {
      let slim = slimMeta.get(meta)
      if (!slim) slimMeta.set(meta, (slim = countsOnly(meta)))
      const m: MatchFields = { title: '', dedup: out.dedup, severity: out.severity, alertContext: EMPTY_CONTEXT }
      grouper.add(slim, m, eventMs, record, now)
    }
    if (grouper.groups.size === before) return
    // a new group: within the caps, or the replay is refused (not cut short silently)
    if (o.maxGroups !== undefined && grouper.groups.size > o.maxGroups)
      throw new ReplayRequestError(
        `this replay would hold more than ${o.maxGroups.toLocaleString('en-US')} alert groups (config detection.replay.maxGroups): narrow the range or name fewer rules`,
      )
    if (!content || o.maxContentBytes === undefined) return
    contentBytes += out.title.length + out.dedup.length + jsonLength(out.alertContext)
    if (contentBytes > o.maxContentBytes)
      throw new ReplayRequestError(
        `this replay would hold more than ${sizeText(o.maxContentBytes)} of alert titles, dedup strings and contexts (config detection.replay.maxContentBytes): narrow the range or name fewer rules`,
      )
  }
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
    for (const { rule } of evaluations.failed) counts.get(rule.meta.id)!.errors++
    batch.forEach(({ rec, eventMs, rules }, i) => {
      const record = rec.record
      for (const rule of rules) take(rule.meta, evaluations.of(rule, i, record), eventMs, record)
    })
    batch = []
  }
  // The merge is synchronous between reads: no promise per record. After YIELD_AFTER_MS of work
  // (looked at every CLOCK_EVERY records) the replay lets other work run (a server answers requests
  // and ingests meanwhile): on a busy machine the pieces get shorter, not longer.
  const merge = new StoredLogMerge(cursors)
  let bytes = 0
  let sinceClock = 0
  let lastYield = performance.now()
  try {
    while (await merge.read()) {
      for (let rec = merge.next(); rec !== null; rec = merge.next()) {
        bytes += rec.next - rec.offset
        if (++sinceClock >= CLOCK_EVERY) {
          sinceClock = 0
          if (performance.now() - lastYield >= YIELD_AFTER_MS) {
            o.progress?.(bytes, total)
            await new Promise<void>((resolve) => setImmediate(resolve))
            lastYield = performance.now()
            o.signal?.throwIfAborted()
          }
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
          take(meta, evaluate!(record), eventMs, record)
        }
      }
    }
    await evaluate()
  } finally {
    await merge.close()
  }
  const alerts: Group[] = []
  for (const g of grouper.groups.values()) {
    if (!g.alert) continue
    counts.get(g.ruleId)!.alerts++
    if (content) alerts.push(g)
  }
  alerts.sort((a, b) =>
    a.firstEventTime !== b.firstEventTime ? (a.firstEventTime < b.firstEventTime ? -1 : 1) : a.id < b.id ? -1 : 1,
  )
  const rules = [...counts.values()].sort((a, b) => (a.ruleId < b.ruleId ? -1 : a.ruleId > b.ruleId ? 1 : 0))
  const alertCount = rules.reduce((n, r) => n + r.alerts, 0)
  return {
    records,
    matches,
    rules,
    alertCount,
    *alerts() {
      for (const g of alerts)
        yield sampleMax ? { ...alertView(g), sampleEvents: samples.get(g.id) ?? [] } : alertView(g)
    },
  }
}
