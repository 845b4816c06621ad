// Composition root: reads the configuration and environment, builds every part (the rules
// service's parts, engines, tokens, reconciler, log sources, HTTP app: createService) and listens
// (startServer). The only module that starts a server; the CLI's `serve` calls startServer and
// handles signals; tests that need no socket call createService's app in process.
import http from 'node:http'
import { performance } from 'node:perf_hooks'
import type Koa from 'koa'
import type { ApiState } from './api/context.js'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import { createApp } from './api/app.js'
import { RuleHistoryReads } from './service/rule-history.js'
import { createLogSources } from './ingest/index.js'
import { findLogType, listLogTypes, logTypeNames } from './ingest/log-types.js'
import { querySettings, sizeBytes } from './query/config.js'
import { createPlanParts } from './plans/index.js'
import { planSettings } from './plans/config.js'
import { SqlChecker } from './engine/sql/sql-check.js'
import { QueryEngine } from './query/query-engine.js'
import { createScheduledQueryMetrics } from './query/query-metrics.js'
import { QueryScheduler, type QuerySchedulerOptions } from './query/query-scheduler.js'
import { ScheduledQueries } from './query/scheduled-query.js'
import { alertsPerRuleHour, pythonDetection, replayLimits } from './detect/config.js'
import { createDetection, type Detection, type LiveEngines } from './detect/index.js'
import { createDestinations, type Destinations } from './destinations/index.js'
import { ensureBootstrapToken, TokenStore } from './auth/token-store.js'
import { startTokenRefresh } from './auth/token-refresh.js'
import { PACKAGE_ROOT } from './config/load.js'
import { loadServiceConfig } from './config-sections.js'
import type { Config } from './config/schema.js'
import { closeEngines, createEngineRegistry } from './engine/registry.js'
import { createPythonFor } from './engine/simple-python/index.js'
import type { EngineRegistry } from './engine/engine.js'
import { createLogger, type Logger } from './log.js'
import { createMetricsRegistry } from './metrics.js'
import { instrumentEngines } from './engine/engine-metrics.js'
import { registerCatalogMetrics } from './service/catalog-metrics.js'
import { Reconciler } from './reconcile/reconciler.js'
import { startReplicaPush } from './reconcile/replica-push.js'
import { closeRuleParts, openRuleParts, RuleHealthReads, type RuleParts } from './service/index.js'
import { loadFullRevision } from './service/revision-sync.js'
import { ServiceCommitFile } from './service/service-commits.js'
import { RuleIndex } from './rules/rule-index.js'
import { lockDataDir } from './data-dir/data-dir-lock.js'
import { reportPrivacy, restrictUmask, secureDataDir } from './data-dir/data-dir-privacy.js'
import { GitRemote } from './git/remote.js'
import { stateSettings } from './state/config.js'
import { PgLedger } from './state/pg-ledger.js'
import { openSingletons } from './state/lease-singletons.js'
import { openSshSigner } from './git/commit-signer.js'
import { checkAllowedSignersFile } from './git/allowed-signers.js'

export interface StartOptions {
  env: Record<string, string | undefined>
  /** Layered over the configuration (tests). */
  configOverrides?: unknown
  logger?: Logger
  /** Register default process metrics (off in tests running several servers). */
  defaultMetrics?: boolean
  /** The rule engines to use instead of this build's (tests of the 501 paths). */
  engines?: EngineRegistry
  /** Log lines for a person instead of JSON (`serve --pretty`, or stdout on a terminal). */
  pretty?: boolean
  /** The engines whose `live` members detection runs, instead of this build's (tests inject evaluators). */
  detectionEngines?: LiveEngines
  /** The correlation schedule's clock and minute length (tests of correlation rules). */
  correlationSchedule?: Parameters<typeof createDetection>[0]['correlation']
  /** The scheduled queries' clock, minute length and tick (tests of scheduled queries). */
  scheduledQueries?: Pick<QuerySchedulerOptions, 'now' | 'minuteMs' | 'tickMs'>
}

/** A started server, with the rules service's parts (repo, catalog, follower, writer, remote) for tests. */
export interface RunningServer extends RuleParts {
  url: string
  /** The Koa application (its routers are the route table tests enumerate). */
  app: Koa<ApiState>
  config: Config
  dataDir: string
  /** What the start-up banner says (also logged, one structured line each). */
  bannerLines: string[]
  /** Detection on the stored log (alerts, rule errors). */
  detection: Detection
  /** Alert destinations and their deliveries. */
  destinations: Destinations
  logger: Logger
  /** Stops everything; logs the shutdown and its duration. */
  close(): Promise<void>
}

/** Every part and the HTTP app, started but not listening. */
export interface Service extends RuleParts {
  app: Koa<ApiState>
  config: Config
  dataDir: string
  bannerLines: string[]
  detection: Detection
  destinations: Destinations
  logger: Logger
  /** Stops the parts in the reverse order of their start and releases the data-dir lock. */
  close(): Promise<void>
}

export const TEMPLATE_DIR = path.join(PACKAGE_ROOT, 'rules-repo-template')

export async function startServer(opts: StartOptions): Promise<RunningServer> {
  const startedAt = performance.now()
  const service = await createService(opts)
  const { app, config, dataDir, bannerLines, logger, catalog, remote } = service
  try {
    const server = http.createServer(app.callback())
    server.keepAliveTimeout = 5000
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(config.server.port, config.server.host, () => resolve())
    })
    const closeServer = () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
    const addr = server.address() as AddressInfo
    const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address
    const url = `http://${host}:${addr.port}`
    logger.info(
      {
        url,
        dataDir,
        remote: remote?.displayUrl ?? null,
        revision: catalog.index.revision,
        rules: catalog.index.rules.size,
        startMs: Math.round(performance.now() - startedAt),
      },
      'rulekeeper is serving',
    )
    // The banner as log lines: stdout carries JSON only (secrets are never in it: paths and names).
    for (const line of bannerLines) logger.info({ banner: true }, line)
    const close = async () => {
      const stopping = performance.now()
      logger.info('rulekeeper is shutting down')
      await closeServer()
      await service.close()
      logger.info({ shutdownMs: Math.round(performance.now() - stopping) }, 'rulekeeper stopped')
      logger.flush()
    }
    return { ...service, url, close }
  } catch (err) {
    await service.close()
    throw err
  }
}

export async function createService(opts: StartOptions): Promise<Service> {
  const config = loadServiceConfig(opts.env, opts.configOverrides, { resolveSecrets: true })
  const logger = opts.logger ?? createLogger({ level: config.log.level, pretty: opts.pretty })
  const dataDir = path.resolve(config.dataDir)
  // Private from the first byte: the umask applies before the data directory is even created.
  if (!restrictUmask())
    logger.warn('not on the main thread: the umask stays as it is; the data directory is only checked at start')
  const lock = lockDataDir(dataDir)
  const cleanups: Array<() => Promise<void> | void> = [() => lock.release()]
  const cleanup = async () => {
    for (const c of cleanups.reverse()) await c()
  }
  try {
    reportPrivacy(logger, secureDataDir(dataDir))
    const metrics = createMetricsRegistry(opts.defaultMetrics ?? true)
    // One SQL checker, a process of its own bounding DuckDB's preparation: query files and queries.
    const querySet = querySettings(config as Record<string, unknown>)
    const sqlChecker = new SqlChecker(() => logTypeNames().flatMap((n) => findLogType(n) ?? []), {
      prepareTimeoutMs: querySet.prepareTimeoutMs,
      prepareMemoryBytes: sizeBytes(querySet.prepareMemoryLimit),
    })
    cleanups.push(() => sqlChecker.close())
    const engines = instrumentEngines(
      opts.engines ??
        createEngineRegistry({
          sql: sqlChecker,
          python: {
            ...config.python,
            logger,
            serverEnv: opts.env,
            metrics,
            detection: pythonDetection(config as Record<string, unknown>),
          },
        }),
      metrics,
    )
    cleanups.push(() => closeEngines(engines))
    // In the background: a host where the sandbox cannot start is logged now, not at the first save.
    for (const engine of Object.values(engines)) void engine?.prepare?.().catch(() => {})
    const gitdir = path.join(dataDir, 'repo.git')
    const remote = config.git.remote.url
      ? new GitRemote(gitdir, {
          url: config.git.remote.url,
          branch: config.git.branch,
          username: opts.env.RULEKEEPER_GIT_USERNAME,
          token: opts.env.RULEKEEPER_GIT_TOKEN,
          timeoutMs: config.git.remote.timeoutMs,
        })
      : undefined
    // A local remote that is missing or will refuse our pushes stops the start here, saying why.
    for (const note of (await remote?.verify()) ?? []) logger.warn({ remote: remote?.displayUrl }, note)
    // A signing key that others can read, or that is no key, stops the start here, saying why.
    const signer = config.git.signing ? await openSshSigner(config.git.signing.sshKeyFile) : null
    if (signer) logger.info({ key: signer.fingerprint }, 'the commits the service makes are signed')
    const allowedSignersFile = config.git.verify?.allowedSignersFile ?? null
    if (allowedSignersFile) await checkAllowedSignersFile(allowedSignersFile)
    const rules = await openRuleParts({
      signer,
      allowedSignersFile,
      gitdir,
      remote,
      massDelete: { share: config.reconcile.massDeleteShare, min: config.reconcile.massDeleteMin },
      bounds: config.rules,
      branch: config.git.branch,
      committer: config.git.committer,
      engines,
      templateDir: TEMPLATE_DIR,
      cacheDir: path.join(dataDir, 'cache'),
      logger,
      metrics,
      serviceCommits: new ServiceCommitFile(path.join(dataDir, 'service-commits')),
    })
    cleanups.push(() => closeRuleParts(rules))
    registerCatalogMetrics(metrics, () => rules.catalog.index)
    const tokens = new TokenStore(dataDir)
    const bannerLines: string[] = []
    const boot = ensureBootstrapToken(tokens, opts.env.RULEKEEPER_BOOTSTRAP_TOKEN)
    if (boot) bannerLines.push(boot)
    cleanups.push(startTokenRefresh(tokens, config.api.tokenReloadMs, logger))

    const reconciler = new Reconciler(
      { catalog: rules.catalog, follower: rules.follower, bounds: config.rules },
      logger,
      metrics,
    )
    reconciler.start(config.reconcile.schedule)
    cleanups.push(() => reconciler.stop())
    const state = stateSettings(config as Record<string, unknown>, opts.env)
    cleanups.push(await startReplicaPush(state, { catalog: rules.catalog, reconciler, logger }))

    // Detection's output in the shared PostgreSQL store (`state.postgres`), else in the data directory;
    // there too the delivery outbox and the lease under which one replica runs the schedules. Opened
    // before the log sources: the replica's name is held by this process alone from here.
    if (state.postgres) bannerLines.push(`State store: PostgreSQL, as replica ${state.replica}`)
    const shared = state.postgres
      ? await openSingletons({ url: state.postgres.url, replica: state.replica, ttlMs: state.leaseTtlMs }, logger)
      : null
    if (shared) cleanups.push(() => shared.close())
    const logSources = await createLogSources({
      config: config as Record<string, unknown>,
      dataDir,
      logger,
      metrics,
      env: opts.env,
    })
    cleanups.push(() => logSources.close())
    bannerLines.push(...logSources.bannerLines)

    const destinations = await createDestinations({
      config: config as Record<string, unknown>,
      env: opts.env,
      dataDir,
      logger,
      metrics,
      postgres: shared ? { db: shared.db, replica: state.replica } : undefined,
    })
    cleanups.push(() => destinations.close())
    const detection = await createDetection({
      dataDir,
      catalog: rules.catalog,
      logSources,
      logger,
      metrics,
      engines: opts.detectionEngines ?? engines,
      correlation: { ...opts.correlationSchedule, slots: shared?.correlationSlots },
      alertHook: destinations.hook,
      replayLimits: replayLimits(config as Record<string, unknown>),
      alertsPerRuleHour: alertsPerRuleHour(config as Record<string, unknown>),
      openLedger: state.postgres
        ? () => PgLedger.connect({ url: state.postgres!.url, replica: state.replica }, logger)
        : undefined,
      rulesAt: async (rev) =>
        (await rules.repo.hasCommit(rev))
          ? loadFullRevision(rules.repo, rev, RuleIndex.empty(), engines, undefined, {
              maxFileBytes: config.rules.maxFileBytes,
            })
          : null,
    })
    cleanups.push(() => detection.close())

    const queries = await QueryEngine.open({
      ...detection.readers,
      logTypes: logTypeNames().flatMap((n) => findLogType(n) ?? []),
      settings: querySet,
      checker: sqlChecker,
      // The signals table reads detection's match files up to the checkpoint's committed lengths
      // (the file store's; over PostgreSQL the table is empty for now).
      signals: detection.signalFiles,
    })
    cleanups.push(async () => queries.close())
    // Scheduled queries on their schedule, their rows through the scheduled rules (closed first).
    const scheduler = new QueryScheduler({
      ...opts.scheduledQueries,
      catalog: rules.catalog,
      queries: new ScheduledQueries(queries, (name) => rules.catalog.index.supports.get(name)),
      // Scheduled rules compile as Python streaming rules do (an injected detection engine first).
      compile: opts.detectionEngines?.python?.live ?? engines.python?.live,
      book: detection.book,
      dataDir,
      slots: shared?.querySlots,
      logger,
      metrics: createScheduledQueryMetrics(metrics),
    })
    scheduler.start()
    cleanups.push(() => scheduler.close())

    // Plans of a change (POST /plans) and pull-request checks (a forge's event planned and reported).
    const { plans, pullRequests } = createPlanParts({
      repo: rules.repo,
      engines: opts.detectionEngines ? { ...engines, ...opts.detectionEngines } : engines,
      served: () => rules.catalog.index,
      indexAt: (rev) => loadFullRevision(rules.repo, rev, RuleIndex.empty(), engines, undefined, config.rules),
      ...detection.readers,
      limits: replayLimits(config as Record<string, unknown>),
      maxFileBytes: config.rules.maxFileBytes,
      dataDir,
      settings: planSettings(config as Record<string, unknown>),
      branch: config.git.branch,
      remote: rules.remote,
      forgeToken: opts.env.RULEKEEPER_FORGE_TOKEN || undefined,
      logger,
    })
    cleanups.push(() => pullRequests.idle())

    const app = createApp({
      catalog: rules.catalog,
      engines,
      writer: rules.writer,
      reads: new RuleHistoryReads({ repo: rules.repo, catalog: rules.catalog, engines }),
      tokens,
      logger,
      metrics,
      status: {
        status: () => ({
          ...reconciler.status(),
          detection: {
            ...detection.status(),
            quarantined: Object.values(engines).flatMap(
              (e) => e?.quarantined?.((id) => rules.catalog.index.rules.get(id)?.file) ?? [],
            ),
          },
          ...destinations.status(rules.catalog.index),
          scheduledQueries: scheduler.status(),
        }),
        invalidFiles: (after, limit) => reconciler.invalidFiles(after, limit),
        reconcile: (o) => reconciler.reconcile(o),
      },
      basePath: config.api.basePath,
      maxBodyBytes: config.api.maxBodyBytes,
      testBudgetMs: config.python.requestBudgetMs,
      ruleLimits: config.rules,
      backend: config.backend.kind,
      webhookSecret: opts.env.RULEKEEPER_GIT_WEBHOOK_SECRET || undefined,
      rootRouters: [logSources.router],
      ruleErrors: detection.ruleErrors,
      ruleHealth: new RuleHealthReads(() => rules.catalog.index.rules, detection, scheduler),
      correlationRuns: detection.correlation,
      alerts: detection.alerts,
      replays: detection.replays,
      // Over PostgreSQL the alert is the store's (any replica's) and its deliveries the shared outbox's.
      redeliveries: state.postgres
        ? {
            async retryDeliveries(id) {
              if (!(await detection.alerts.has(id))) return null
              await destinations.redeliver(id)
              return detection.alerts.get(id)
            },
          }
        : destinations,
      // pythonBody of simple rules (include-python=true), transpiled once per indexed rule
      pythonFor: createPythonFor(),
      ruleWarnings: destinations.ruleWarnings,
      logTypes: { listLogTypes },
      queries,
      scheduledQueryRuns: scheduler,
      plans,
      pullRequests,
    })
    return { app, config, dataDir, ...rules, bannerLines, detection, destinations, logger, close: cleanup }
  } catch (err) {
    await cleanup()
    throw err
  }
}
