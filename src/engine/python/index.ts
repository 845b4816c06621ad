// The Python side of scheduled rules, assembled: a lazily started pool of sandboxed runs, the
// scheduled-rule engine on top of it (and the policies' engine, the same on policy(resource)), the
// import checks the API calls, the check of a revision's Python files at index time
// (module-check.ts), and streaming rules' detection (`live`, live-evaluation.ts) on warm workers
// taken from the same pool's spares (warm-detect.ts), with their budgets and quarantine. The caller
// (engine registry / main) owns the pool's life: close() kills every sandboxed process.
import type { Logger } from '../../log.js'
import type { Registry } from '../../metrics.js'
import type { RuleFile, RuleProblem } from '../../rules/model.js'
import type { EngineContext, LiveCompiler, RuleEngine } from '../engine.js'
import { createLiveDetection, type EvaluateBatch } from './live-detect.js'
import { batchLive } from './live-evaluation.js'
import { createModuleCheck } from './module-check.js'
import type { RunLimits } from './protocol.js'
import { Quarantine, type QuarantineEntry } from './quarantine.js'
import { createScheduledEngine, type ScheduledEngine } from './scheduled-engine.js'
import { WarmDetection, type WarmSettings } from './warm-detect.js'
import { WorkerPool, type PoolInfo } from './worker-pool.js'

export type { QuarantineEntry } from './quarantine.js'

/** `detection.python`: how detection runs Python rules (docs/configuration.md). */
export interface PythonDetectionSettings {
  /** `shared`: a revision's rules share `poolSize` warm workers; `per-rule`: one warm worker each. */
  isolation?: WarmSettings['isolation']
  /**
   * A rule's budget per batch: at least `budgetMs` (default: `timeoutMs`, one record's clock), else
   * `budgetMsPerRecord` (2) per record.
   */
  budgetMs?: number
  budgetMsPerRecord?: number
  /** Batches in a row a rule may be stopped in before it is quarantined until it changes (default 3). */
  quarantineAfter?: number
  /**
   * A rule's share of a shared worker (past it the rule is evicted to a worker of its own): `recordMs`
   * on one record, `batchBaseMs` + `batchPerRecordMs` × its records over a batch (250, 250, 1).
   */
  share?: { recordMs?: number; batchBaseMs?: number; batchPerRecordMs?: number }
}

export const DEFAULT_PYTHON_DETECTION: Required<Omit<PythonDetectionSettings, 'budgetMs' | 'share'>> = {
  isolation: 'shared',
  budgetMsPerRecord: 2,
  quarantineAfter: 3,
}

export type { PythonTestOutcome } from './verdict.js'

export interface PythonEngineOptions {
  /** `python.command`: resolved on the server's PATH at first use. */
  command: string
  poolSize: number
  /** Wall clock per test (default in config: 5000). */
  timeoutMs: number
  logger?: Logger
  /** Address-space limit of the process running rule code (default 512 MiB). */
  memoryBytes?: number
  /** CPU seconds per test (default: the timeout rounded up, at least 1). */
  cpuSecondsPerTest?: number
  /** Largest file rule code may write in its scratch directory (default 8 MiB). */
  fileBytes?: number
  /** What one test may print, stdout and stderr together (default 1 MiB). */
  outputBytes?: number
  /**
   * The server's environment, for finding `command` on PATH and for the one-off version probe
   * (PATH, HOME and PYENV_* only; workers always get an empty environment). Default: process.env.
   */
  serverEnv?: Readonly<Record<string, string | undefined>>
  /** Rules waiting for a run at once (default 64) and per caller (16); past either, 503. */
  queueLimit?: number
  queuePerCaller?: number
  /** Each run's tmpfs scratch directory (default 16 MiB). */
  scratchBytes?: number
  /** Root only: the first uid of concurrent runs. */
  uidBase?: number
  /** Where the pool registers its metrics. */
  metrics?: Registry
  /** Detection's warm workers, budgets and quarantine (`detection.python`). */
  detection?: PythonDetectionSettings
}

export interface PythonPool {
  /** Kills every sandboxed process. */
  close(): Promise<void>
  /** Probes the interpreter and starts one spare sandbox (logging what it found, or why it cannot). */
  describe(): Promise<PoolInfo>
  /** Resolves once every spare sandbox is started and waiting for a job. */
  ready(): Promise<void>
  /** Pids of the live sandboxes (tests, diagnostics). */
  pids(): number[]
  /** A job that runs nothing in a ready spare (benchmark baseline: the cost of one run). */
  ping(): Promise<void>
  /** Detection's warm worker processes alive (diagnostics, benchmarks). */
  warmWorkers(): number
}

export function createPythonEngine(opts: PythonEngineOptions): {
  engine: RuleEngine
  pool: PythonPool
  checkPythonModule(rule: RuleFile, ctx: EngineContext): Promise<RuleProblem[]>
  runModuleTests: ScheduledEngine['runModuleTests']
  /** Detection: a Python streaming rule over a batch of records (warm workers, warm-detect.ts). */
  evaluateBatch: EvaluateBatch
  /** The same, one sandboxed run per rule and batch (live-detect.ts): a crashed rule's records. */
  evaluateOneShot: EvaluateBatch
  /** Python rules quarantined in detection (`/status`); `served`: a rule's file as served now. */
  quarantined(served?: (ruleId: string) => RuleFile | undefined): QuarantineEntry[]
  /** The streaming rules' `live` member: batches through evaluateBatch (live-evaluation.ts). */
  live: LiveCompiler
  /** Indexing: a revision's Python files compiled and imported in one run (module-check.ts). */
  checkModules: NonNullable<RuleEngine['checkModules']>
  /** Policies: their tests and import check, on the same pool. */
  policy: Pick<ScheduledEngine, 'engine' | 'checkPythonModule'>
} {
  const limits: RunLimits = {
    timeoutMs: opts.timeoutMs,
    memoryBytes: opts.memoryBytes ?? 512 * 1024 * 1024,
    cpuSeconds: opts.cpuSecondsPerTest ?? Math.max(1, Math.ceil(opts.timeoutMs / 1000)),
    fileBytes: opts.fileBytes ?? 8 * 1024 * 1024,
    // RLIMIT_NPROC of the run: the interpreter and its threads (each a host pid and kernel memory).
    maxProcesses: 64,
    outputBytes: opts.outputBytes ?? 1024 * 1024,
  }
  const workers = new WorkerPool({
    command: opts.command,
    poolSize: opts.poolSize,
    logger: opts.logger,
    serverEnv: opts.serverEnv ?? process.env,
    queueLimit: opts.queueLimit,
    queuePerCaller: opts.queuePerCaller,
    scratchBytes: opts.scratchBytes,
    uidBase: opts.uidBase,
    metrics: opts.metrics,
  })
  const { engine, checkPythonModule, runModuleTests } = createScheduledEngine(workers, limits)
  const detection = { ...DEFAULT_PYTHON_DETECTION, ...opts.detection }
  const quarantine = new Quarantine(detection.quarantineAfter, opts.metrics)
  const evaluateOneShot = createLiveDetection(workers, limits)
  const warm = new WarmDetection(
    () => workers.takeSandbox(),
    limits,
    {
      isolation: detection.isolation,
      workers: opts.poolSize,
      budgetMs: detection.budgetMs ?? opts.timeoutMs,
      budgetMsPerRecord: detection.budgetMsPerRecord,
      shareRecordMs: detection.share?.recordMs,
      shareMs: detection.share?.batchBaseMs,
      shareMsPerRecord: detection.share?.batchPerRecordMs,
    },
    quarantine,
    evaluateOneShot,
  )
  const pool: PythonPool = {
    close: async () => {
      warm.close()
      await workers.close()
    },
    warmWorkers: () => warm.workers(),
    describe: () => workers.describe(),
    ready: () => workers.ready(),
    pids: () => workers.pids(),
    ping: async () => {
      await workers.run({ op: 'ping', tests: [], limits })
    },
  }
  const policy = createScheduledEngine(workers, limits, 'policy')
  const evaluateBatch = warm.evaluate
  const live = batchLive(evaluateBatch, warm.evaluateSparse)
  return {
    engine,
    pool,
    checkPythonModule,
    runModuleTests,
    evaluateBatch,
    evaluateOneShot,
    quarantined: (served) => quarantine.list(served),
    // A new revision of a quarantined rule is evaluated (quarantine.ts compares contents); its old
    // entry leaves /status at the next listing against the served files.
    live,
    checkModules: createModuleCheck(workers, limits),
    policy,
  }
}
