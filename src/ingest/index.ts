// Entry point of the HTTP log sources: builds every configured source (token, recovery of its files,
// duplicate filter) and the router that serves them. The composition root mounts `router` at the
// root, prints `bannerLines`, and awaits `close()` on shutdown so queued lines are flushed. The data
// files go to this replica's folder of the events layout (events-layout.ts), and the durable
// batches name them relative to the layout's root.
import type { Router } from '@koa/router'
import type { Registry } from 'prom-client'
import { RulekeeperError } from '../errors.js'
import type { Logger } from '../log.js'
import { resolveLogSources } from './config.js'
import { createIngestMetrics } from './ingest-metrics.js'
import { createIngestRouter } from './ingest-router.js'
import { type EventsLayout, eventsLayoutOf, ownFileName } from './events-layout.js'
import { stateSettings } from '../state/config.js'
import { LogSource } from './log-source.js'
import { findLogType } from './log-types.js'

export interface LogSources {
  router: Router
  bannerLines: string[]
  /** Where the events are stored (`state.eventsDir`, else the data directory's `logs/`). */
  events: EventsLayout
  /** The log types served, and a subscription to every source's durable batches (detection). */
  logTypes: string[]
  onDurable(fn: (files: ReadonlyArray<{ file: string; size: number }>) => void): void
  close(): Promise<void>
}

export async function createLogSources(opts: {
  config: Record<string, unknown>
  dataDir: string
  logger: Logger
  metrics: Registry
  env: Record<string, string | undefined>
}): Promise<LogSources> {
  const events = eventsLayoutOf(opts.dataDir, stateSettings(opts.config, opts.env))
  const { sources: configs, audit } = resolveLogSources(opts.config)
  const metrics = createIngestMetrics(opts.metrics)
  const sources = new Map<string, LogSource>()
  try {
    for (const config of configs) {
      const logType = findLogType(config.logType)
      // checkAuditConfig (run by loadConfig and by resolveLogSources) refuses any other name.
      if (!logType)
        throw new RulekeeperError(
          'ConfigInvalid',
          `log source ${config.id}: log type ${config.logType} is not registered`,
        )
      sources.set(
        config.id,
        await LogSource.open({
          config,
          logType,
          settings: audit,
          dataDir: opts.dataDir,
          logsRoot: events.ownRoot,
          env: opts.env,
          logger: opts.logger,
          metrics,
        }),
      )
    }
  } catch (err) {
    for (const s of sources.values()) await s.close()
    throw err
  }
  return {
    events,
    router: createIngestRouter(sources, metrics),
    bannerLines: [...sources.values()].map((s) => s.auth.bannerLine),
    logTypes: [...new Set(configs.map((c) => c.logType))],
    onDurable(fn) {
      const named = events.own
        ? (files: ReadonlyArray<{ file: string; size: number }>) =>
            fn(files.map((f) => ({ file: ownFileName(events, f.file), size: f.size })))
        : fn
      for (const s of sources.values()) s.onDurable(named)
    },
    async close() {
      for (const s of sources.values()) await s.close()
    },
  }
}
