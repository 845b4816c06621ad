// One running log source: its log type (a registry entry, log-types.ts), its authenticator, its
// writer and duplicate filter, and storeDelivery, which sorts a parsed delivery into accepted,
// rejected and duplicate records, queues the lines, and answers only once they are durable.
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import type { Logger } from '../log.js'
import type { AuditSettings, LogSourceConfig } from './config.js'
import { DuplicateFilter } from './duplicate-filter.js'
import { GroupCommitWriter } from './group-commit-writer.js'
import type { IngestMetrics } from './ingest-metrics.js'
import { type LogType, storedLine } from './log-type.js'
import { MAX_RECORD_DEPTH, cutAtDepth, exceedsDepth, hasIllFormedText, type ParsedPayload } from './parse-payload.js'
import { recoverSourceFiles } from './recover-store.js'
import { createSourceAuthenticator, type SourceAuthenticator } from './source-auth.js'

export interface DeliveryResult {
  accepted: number
  rejected: number
  duplicates: number
  unknownKind: number
  errors: Array<{ index: number; line?: number; message: string }>
}

export class LogSource {
  readonly filter: DuplicateFilter
  private readonly writer: GroupCommitWriter
  // p_row_id: a per-start random prefix and a counter are unique without coordination.
  private readonly rowPrefix = randomBytes(6).toString('hex')
  private rowSeq = 0
  private pruneTimer: NodeJS.Timeout
  private readonly durableListeners = new Set<(files: ReadonlyArray<{ file: string; size: number }>) => void>()

  private constructor(
    readonly config: LogSourceConfig,
    readonly logType: LogType,
    readonly auth: SourceAuthenticator,
    private readonly settings: AuditSettings,
    logsRoot: string,
    private readonly metrics: IngestMetrics,
  ) {
    this.filter = new DuplicateFilter(settings.dedupWindowHours * 3600_000)
    this.writer = new GroupCommitWriter({
      root: logsRoot,
      filePrefix: config.id,
      rollBytes: settings.fileRollBytes,
      onCommit: ({ seconds, fsyncSeconds, lines }) => {
        metrics.commitSeconds.observe({ source: config.id }, seconds)
        metrics.fsyncSeconds.observe({ source: config.id }, fsyncSeconds)
        metrics.batchLines.observe({ source: config.id }, lines)
      },
      onDurable: (files) => {
        for (const l of this.durableListeners) l(files)
      },
    })
    this.pruneTimer = setInterval(() => this.filter.prune(Date.now()), 60_000)
    this.pruneTimer.unref()
  }

  static async open(opts: {
    config: LogSourceConfig
    /** The registry entry of `config.logType`. */
    logType: LogType
    settings: AuditSettings
    dataDir: string
    /** The folder its data files go to (default `<data dir>/logs`; a replica's folder of a shared one). */
    logsRoot?: string
    env: Record<string, string | undefined>
    logger: Logger
    metrics: IngestMetrics
  }): Promise<LogSource> {
    const auth = await createSourceAuthenticator(opts.config, opts.dataDir, opts.env)
    const root = opts.logsRoot ?? path.join(opts.dataDir, 'logs')
    const source = new LogSource(opts.config, opts.logType, auth, opts.settings, root, opts.metrics)
    const report = await recoverSourceFiles({
      root,
      logType: opts.logType.name,
      sourceId: opts.config.id,
      filter: source.filter,
      now: Date.now(),
    })
    for (const t of report.tornTails) {
      opts.logger.warn(
        { source: opts.config.id, file: t.file, offset: t.offset, bytes: t.bytes },
        'moved a torn tail to _rejected',
      )
      opts.metrics.records.inc({ source: opts.config.id, outcome: 'torn_tail' })
    }
    opts.logger.info({ source: opts.config.id, files: report.files, ids: report.idsLoaded }, 'log source ready')
    return source
  }

  /** Calls `fn` in commit order with each durable batch's files (relative to `logs/`) and lengths. */
  onDurable(fn: (files: ReadonlyArray<{ file: string; size: number }>) => void): () => void {
    this.durableListeners.add(fn)
    return () => this.durableListeners.delete(fn)
  }

  async close(): Promise<void> {
    clearInterval(this.pruneTimer)
    await this.writer.close()
  }

  async storeDelivery(payload: ParsedPayload): Promise<DeliveryResult> {
    const now = Date.now()
    const receivedAt = new Date(now).toISOString()
    const sourceId = this.config.id
    const logType = this.logType.name
    const normalize = this.logType.normalize
    const rejectedDir = `_rejected/${logType}/dt=${receivedAt.slice(0, 10)}`
    const result: DeliveryResult = { accepted: 0, rejected: 0, duplicates: 0, unknownKind: 0, errors: [] }
    // Lines by partition directory; hour partitions are looked up by the hour's start (a number),
    // so no path string is built per record.
    const byDir = new Map<string, string[]>()
    const rejectedLines: string[] = []
    const byHour = new Map<number, string[]>()
    const hourLines = (eventMs: number, eventTime: string): string[] => {
      const hour = eventMs - (((eventMs % 3_600_000) + 3_600_000) % 3_600_000)
      let lines = byHour.get(hour)
      if (!lines) {
        lines = []
        byHour.set(hour, lines)
        byDir.set(`${logType}/dt=${eventTime.slice(0, 10)}/hour=${eventTime.slice(11, 13)}`, lines)
      }
      return lines
    }
    const newIds: string[] = []
    const idsInThisRequest = new Set<string>()
    const waitFor = new Set<Promise<void>>()

    const reject = (index: number, line: number | undefined, message: string, raw: unknown) => {
      result.rejected++
      if (result.errors.length < this.settings.maxErrorsInResponse)
        result.errors.push({ index, ...(line ? { line } : {}), message })
      if (rejectedLines.length === 0) byDir.set(rejectedDir, rejectedLines)
      rejectedLines.push(
        JSON.stringify({ error: message, receivedAt, sourceId, index, ...(line ? { line } : {}), raw }),
      )
    }

    // Everything from here to markPending is synchronous, so no other request can slip in between
    // checking an id and marking it queued.
    for (const item of payload.items) {
      if ('unreadable' in item) {
        reject(item.index, item.line, item.unreadable, item.raw)
        continue
      }
      if (exceedsDepth(item.value)) {
        const message = `the record is nested deeper than ${MAX_RECORD_DEPTH} levels`
        reject(item.index, item.line, message, item.text ?? cutAtDepth(item.value))
        continue
      }
      if (payload.suspectUnicode && hasIllFormedText(item.value)) {
        reject(
          item.index,
          item.line,
          'the record holds invalid UTF-8 (kept with each bad byte 0xNN as \\udcNN)',
          item.value,
        )
        continue
      }
      const verdict = normalize(item.value, {
        sourceId,
        parseTime: receivedAt,
        rowId: `${this.rowPrefix}${(this.rowSeq++).toString(36).padStart(8, '0')}`,
      })
      if (!verdict.ok) {
        reject(item.index, item.line, verdict.reason, item.value)
        continue
      }
      if (verdict.id !== undefined) {
        if (idsInThisRequest.has(verdict.id)) {
          result.duplicates++
          continue
        }
        const seen = this.filter.check(verdict.id, now)
        if (seen.kind !== 'new') {
          result.duplicates++
          if (seen.kind === 'pending') waitFor.add(seen.commit)
          continue
        }
        idsInThisRequest.add(verdict.id)
        newIds.push(verdict.id)
      }
      hourLines(verdict.eventMs, verdict.eventTime).push(storedLine(verdict))
      result.accepted++
      if (verdict.unknownKind) result.unknownKind++
    }
    const commit = this.writer.append(byDir)
    this.filter.markPending(newIds, now, commit)
    // A duplicate of a record still in flight is acknowledged only once that record is durable.
    await Promise.all([commit, ...waitFor])

    const m = this.metrics.records
    m.inc({ source: sourceId, outcome: 'accepted' }, result.accepted)
    m.inc({ source: sourceId, outcome: 'rejected' }, result.rejected)
    m.inc({ source: sourceId, outcome: 'duplicate' }, result.duplicates)
    m.inc({ source: sourceId, outcome: 'unknown_kind' }, result.unknownKind)
    return result
  }
}
