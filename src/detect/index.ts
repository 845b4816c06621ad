// Entry point of detection: opens the ledger (the file store, cutting uncommitted output back to the
// checkpoint, or the one main.ts opens: the PostgreSQL store of `state.postgres`), builds the alert book over it (the one writer of detection output) and the
// log-reading loop over the served rules, subscribes the loop to the log sources' durable batches,
// catches up from the checkpoint, then schedules the correlation rules (correlation-schedule.ts).
// Gives main.ts what the API serves (alerts, replay runs, rule errors, correlation runs); main.ts
// awaits `close()`.
import type { Logger } from '../log.js'
import type { Registry } from '../metrics.js'
import type { RuleIndex } from '../rules/rule-index.js'
import { AlertBook } from './alert-book.js'
import { AlertReads } from './alert-reads.js'
import { createDetectMetrics } from './detect-metrics.js'
import type { DetectionLedger } from './detection-ledger.js'
import { DetectionStore } from './detection-store.js'
import { Detector } from './detector.js'
import type { LiveEngines } from '../engine/engine.js'
import type { AlertHook } from './alert-hook.js'
import { withAlertLog } from './alert-log.js'
import { replayRuns } from './replay-runs.js'
import { RuleErrorList } from './rule-error-list.js'
import { createCorrelationMetrics } from './correlation-metrics.js'
import { CorrelationScheduler, type CorrelationScheduleOptions } from './correlation-schedule.js'
import { DEFAULT_REPLAY_LIMITS, type ReplayLimits } from './config.js'
import { type EventsLayout, eventsLayout, isOwnFile } from '../ingest/events-layout.js'

export interface Detection {
  /** The log-reading loop. */
  detector: Detector
  /** The one writer of detection output: alerts, groups, rule errors (in memory), commits. */
  book: AlertBook
  /** The durable output (matches, alert groups, rule errors, checkpoint). */
  store: DetectionLedger
  /** The file store's match files (the query engine's signals table); undefined over another store. */
  signalFiles: { detectionsRoot: string; committed: () => Record<string, number> } | undefined
  /** Correlation rules on their schedule (and run now: `runNow`). */
  correlation: CorrelationScheduler
  /** The rule errors as the API lists them. */
  ruleErrors: RuleErrorList
  /** The alerts as the API reads and changes them. */
  alerts: AlertReads
  /**
   * What readers of the stored events (queries, backtests) are given: the root, whether it holds
   * every replica's folder, how far a data file may be read (another replica's: undefined, its size).
   */
  readers: { logsRoot: string; eachReplica: boolean; durableLength(file: string): number | undefined }
  /** Replays as `POST /replay` runs them, with their limits. */
  replays: ReturnType<typeof replayRuns>
  status(): ReturnType<Detector['status']> & {
    correlation: ReturnType<CorrelationScheduler['status']>
    alertLimit: ReturnType<AlertBook['limiter']['limited']>
  }
  close(): Promise<void>
}

export async function createDetection(opts: {
  dataDir: string
  catalog: { readonly index: RuleIndex }
  logSources: {
    /** Where the events are (default `<data dir>/logs`): detection evaluates this replica's, readers read all. */
    events?: EventsLayout
    logTypes: string[]
    onDurable(fn: (files: ReadonlyArray<{ file: string; size: number }>) => void): void
  }
  logger: Logger
  metrics: Registry
  /** The engines whose `live` members evaluate the records, by kind (main.ts: the build's; tests inject their own). */
  engines: LiveEngines
  /** Told of new alerts (destinations); `restored` is called before detection starts. */
  alertHook?: AlertHook
  /** The rules of another commit, for `POST /replay` with a revision (null: no such commit). */
  rulesAt?: (revision: string) => Promise<RuleIndex | null>
  /** The correlation schedule's clock and minute length (tests), its shared slots (PostgreSQL). */
  correlation?: Pick<CorrelationScheduleOptions, 'now' | 'minuteMs' | 'syncMs' | 'slots'>
  /** Limits of `POST /replay` (config `detection.replay`; default: config.ts). */
  replayLimits?: ReplayLimits
  /** Alerts one rule may make in a clock hour (config `detection.alertsPerRuleHour`; default 1,000). */
  alertsPerRuleHour?: number
  /** Opens the ledger detection writes to (main.ts: the PostgreSQL store); default: the file store. */
  openLedger?: () => Promise<DetectionLedger>
}): Promise<Detection> {
  const store: DetectionLedger = opts.openLedger
    ? await opts.openLedger()
    : await DetectionStore.open(opts.dataDir, opts.logger)
  const metrics = createDetectMetrics(opts.metrics)
  const book = new AlertBook(store, {
    alertHook: withAlertLog(opts.logger, opts.alertHook),
    metrics,
    alertsPerRuleHour: opts.alertsPerRuleHour,
  })
  const events = opts.logSources.events ?? eventsLayout(opts.dataDir, null)
  const logsRoot = events.root
  const detector = new Detector({
    dataDir: opts.dataDir,
    events,
    logTypes: opts.logSources.logTypes,
    catalog: opts.catalog,
    engines: opts.engines,
    book,
    logger: opts.logger,
    metrics,
  })
  opts.alertHook?.restored?.(book.groups, (g) => book.context(g))
  opts.logSources.onDurable((files) => detector.notify(files))
  await detector.start()
  const correlation = new CorrelationScheduler({
    ...opts.correlation,
    catalog: opts.catalog,
    detector,
    book,
    store,
    logsRoot,
    logger: opts.logger,
    metrics: createCorrelationMetrics(opts.metrics),
  })
  correlation.start()
  const ruleErrors = new RuleErrorList(
    book.ruleErrors,
    logsRoot,
    (id) => opts.catalog.index.rules.get(id)?.kind ?? null,
  )
  // Another replica's files are read up to their size (complete lines); this one's up to what is durable.
  const durableLength = (file: string) => (isOwnFile(events, file) ? detector.durableLength(file) : undefined)
  return {
    detector,
    book,
    store,
    signalFiles:
      store instanceof DetectionStore
        ? { detectionsRoot: store.root, committed: () => store.checkpoint.outputs }
        : undefined,
    correlation,
    ruleErrors,
    alerts: new AlertReads(store.alerts ?? book, logsRoot),
    readers: { logsRoot, eachReplica: events.shared, durableLength },
    replays: replayRuns({
      durableLength,
      logsRoot,
      eachReplica: events.shared,
      catalog: opts.catalog,
      engines: opts.engines,
      rulesAt: opts.rulesAt ?? (async () => null),
      limits: opts.replayLimits ?? DEFAULT_REPLAY_LIMITS,
    }),
    status: () => ({ ...detector.status(), correlation: correlation.status(), alertLimit: book.limiter.limited() }),
    close: async () => {
      await correlation.close()
      await detector.close()
      await book.close()
    },
  }
}

export type { LiveEngines } from '../engine/engine.js'
export type { AlertHook } from './alert-hook.js'
