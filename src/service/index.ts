// The rules service's composition: opens the repository (from the template on first start, or the
// local copy of the remote), builds its one-way parts — the catalog (catalog.ts), the follower
// (follower.ts) and the writer (rule-writer.ts) — loads the index and catches it up to the tip.
// Callers take the parts they need; nothing here forwards to them.
import type { EngineRegistry } from '../engine/engine.js'
import { verifyCommit } from '../git/allowed-signers.js'
import type { CommitSigner } from '../git/commit-signer.js'
import type { GitRemote } from '../git/remote.js'
import { GitRepository } from '../git/repository.js'
import type { Logger } from '../log.js'
import type { Registry } from '../metrics.js'
import type { RepositoryBounds } from '../rules/repository-bounds.js'
import { RuleCatalog } from './catalog.js'
import { type MassDeleteGuard, RevisionFollower } from './follower.js'
import { commitTemplate, createRepositoryFromTemplate } from './repo-template.js'
import { RuleWriter, writerMetrics } from './rule-writer.js'
import type { ServiceCommits } from './service-commits.js'

/** Rule health for the API (main.ts builds it over detection and the schedulers). */
export { RuleHealthReads } from './rule-health.js'

export interface RuleServiceOptions {
  gitdir: string
  branch: string
  committer: { name: string; email: string }
  engines: EngineRegistry
  templateDir: string
  cacheDir: string | null
  logger: Logger
  metrics: Registry
  /** With a remote, the remote is the truth and the local repository follows it. */
  remote?: GitRemote
  /** The mass-deletion guard: a revision removing more than `share` of the rules, and at least `min`. */
  massDelete?: MassDeleteGuard
  /** What the repository may hold (rules.maxFileBytes, maxRepositoryBytes, maxRules). */
  bounds?: RepositoryBounds
  /** The commits the service makes are recorded here (their actor trailers are believed). */
  serviceCommits: ServiceCommits
  /** Signs every commit the service makes (git.signing); its signature also makes trailers believed. */
  signer?: CommitSigner | null
  /** git.verify: only revisions whose tip commit is signed by a key of this allowed-signers file are served. */
  allowedSignersFile?: string | null
}

/** The parts of the rules service, each used directly by whoever needs it. */
export interface RuleParts {
  repo: GitRepository
  /** The published index, its history metadata and the one lane for changing them. */
  catalog: RuleCatalog
  /** Pulls the remote, follows the branch tip, guards against mass deletions. */
  follower: RevisionFollower
  writer: RuleWriter
  /** The remote the follower and the writer use (none in embedded mode). */
  remote: GitRemote | undefined
}

async function openRepository(o: RuleServiceOptions): Promise<GitRepository> {
  const signer = o.signer ?? null
  const signed = (repo: GitRepository) => {
    repo.signer = signer
    return repo
  }
  if (GitRepository.exists(o.gitdir)) return signed(await GitRepository.open(o.gitdir, o.branch))
  if (o.remote) {
    o.logger.info(
      { gitdir: o.gitdir, remote: o.remote.displayUrl },
      'creating the local copy of the remote rules repository',
    )
    return signed(await GitRepository.init(o.gitdir, o.branch))
  }
  o.logger.info({ gitdir: o.gitdir }, 'creating the rules repository from the template')
  return createRepositoryFromTemplate(o.gitdir, o.branch, o.templateDir, o.committer, o.serviceCommits, signer)
}

/** Why a revision may not be served under git.verify (null: its tip is signed by an allowed key). */
function verifier(repo: GitRepository, allowedSignersFile: string): (revision: string) => Promise<string | null> {
  return async (revision) => {
    const v = await verifyCommit(await repo.readCommit(revision), allowedSignersFile)
    return v.ok ? null : v.reason
  }
}

/** Opens the repository, builds the parts, loads the index and brings it to the (remote's) tip. */
export async function openRuleParts(o: RuleServiceOptions): Promise<RuleParts> {
  const { engines, logger, remote } = o
  const repo = await openRepository(o)
  const catalog = new RuleCatalog({
    cacheDir: o.cacheDir,
    engineKinds: Object.keys(engines),
    logger,
    serviceCommits: o.serviceCommits,
    serviceKey: o.signer?.publicKey ?? null,
  })
  const follower = new RevisionFollower({
    catalog,
    repo,
    engines,
    logger,
    remote,
    massDelete: o.massDelete,
    maxFileBytes: o.bounds?.maxFileBytes,
    verify: o.allowedSignersFile ? verifier(repo, o.allowedSignersFile) : undefined,
  })
  const writer = new RuleWriter({
    catalog,
    follower,
    repo,
    remote,
    engines,
    committer: o.committer,
    logger,
    metrics: writerMetrics(o.metrics),
    bounds: o.bounds,
    serviceCommits: o.serviceCommits,
  })
  await catalog.load(repo)
  if (remote) {
    let tip: string | null
    try {
      tip = await remote.fetch()
    } catch (err) {
      // A local copy can be served while the remote is away; without one there is nothing to serve.
      if ((await repo.head()) === null) throw err
      logger.warn({ msg: (err as Error).message }, 'the remote is unreachable at start; serving the local copy')
      tip = await repo.head()
    }
    if (tip === null && (await repo.head()) === null) {
      // An empty remote: seed it with the template, as the embedded default would be.
      const seed = await commitTemplate(repo, o.templateDir, o.committer, o.serviceCommits)
      await remote.push(seed)
      await repo.moveBranch(null, seed)
    } else if (tip !== null) await follower.followRemoteTip(tip)
  }
  await follower.syncToTip({ allowMassDelete: true })
  return { repo, catalog, follower, writer, remote }
}

/** Lets queued writes finish, saves the caches and closes the repository. */
export async function closeRuleParts(p: RuleParts): Promise<void> {
  await p.writer.idle()
  await p.catalog.close()
  p.repo.close()
}
