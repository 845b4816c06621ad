// Bringing the index and the history metadata up to a revision of the repository: a full load
// (first start, rewritten history) or an incremental one along the first-parent chain (commits
// pushed with plain git, a reconcile). Only changed files are re-read.
import type { EngineContext, EngineRegistry } from '../engine/engine.js'
import { inLoadOrder } from '../rules/kinds/index.js'
import { dataModelsByLogType } from '../rules/data-models.js'
import { isYamlPath } from '../rules/paths.js'
import type { IndexDraft, RuleIndex } from '../rules/rule-index.js'
import { gitBinaryAvailable } from '../git/git-binary.js'
import { firstParentLog, type LoggedCommit } from '../git/git-log.js'
import type { GitRepository } from '../git/repository.js'
import type { FileDiff } from '../git/tree-diff.js'
import { buildFileRecord, ownersOfPython, type RecordSources } from './file-records.js'
import { checkDraftPython } from './python-check.js'
import { quickIdentity, type CommitFileChange, type HistoryTracker, type Identity } from './history.js'
import type { Logger } from '../log.js'

export function draftContext(draft: IndexDraft): EngineContext {
  return {
    findRule: (id) => draft.ruleById(id)?.file,
    findSupport: (id) => draft.supportById(id),
    // A draft changes while it is used: looked up afresh (rare: only test runs ask).
    findDataModel: (logType) => dataModelsByLogType(draft.supportFiles()).get(logType),
  }
}

function sourcesFor(
  repo: GitRepository,
  tree: string | null,
  draft: IndexDraft,
  engines: EngineRegistry,
): RecordSources {
  return {
    engines,
    ctx: draftContext(draft),
    async readFile(p) {
      const oid = await repo.blobAt(tree, p)
      return oid ? (await repo.readBlob(oid)).toString('utf8') : undefined
    },
  }
}

/**
 * The history identity (RuleID, Filename) of YAML blobs read while indexing, by blob id, so the
 * history walk that follows does not read and scan them again.
 */
export type IdentityMemo = Map<string, Identity>

/**
 * Re-reads the given paths of `commit` into the draft (YAML files and the YAML owning a .py);
 * returns the YAML paths read. Their Python is checked afterwards (syncPython), once for all.
 */
export async function reindexPaths(
  repo: GitRepository,
  commit: string,
  draft: IndexDraft,
  paths: Iterable<string>,
  engines: EngineRegistry,
  memo?: IdentityMemo,
): Promise<string[]> {
  const tree = await repo.treeOf(commit)
  const src = sourcesFor(repo, tree, draft, engines)
  const yamlPaths = new Set<string>()
  for (const p of paths) {
    if (isYamlPath(p)) yamlPaths.add(p)
    else if (p.endsWith('.py')) for (const owner of ownersOfPython(draft.allFiles(), p)) yamlPaths.add(owner)
  }
  // Two passes so that a correlation rule is checked against the rules changed with it.
  const ordered = inLoadOrder(yamlPaths)
  // Every blob is asked for before the first is used: packed reads (git cat-file) overlap.
  const oids = await Promise.all(ordered.map((p) => repo.blobAt(tree, p)))
  const blobs = oids.map((oid) => (oid ? repo.readBlob(oid) : null))
  for (const b of blobs) b?.catch(() => {}) // awaited in order below
  for (let i = 0; i < ordered.length; i++) {
    const p = ordered[i]!
    const oid = oids[i]
    if (!oid) {
      draft.removeFile(p)
      continue
    }
    const text = (await blobs[i]!).toString('utf8')
    memo?.set(oid, quickIdentity(text))
    const rec = await buildFileRecord(p, text, src, draft.getFile(p))
    if (rec) draft.putFile(rec)
    else draft.removeFile(p)
  }
  return ordered
}

/**
 * The index-time check of the Python files just re-read (`reread`) and of their dependants
 * (service/python-check.ts), reading more files of `commit` into the draft when it needs them.
 */
export function syncPython(
  repo: GitRepository,
  commit: string,
  draft: IndexDraft,
  reread: readonly string[],
  engines: EngineRegistry,
  opts: { before?: RuleIndex; retryUnchecked?: boolean; log?: Logger } = {},
): Promise<void> {
  return checkDraftPython(draft, {
    reread,
    engines,
    ctx: draftContext(draft),
    rereadMore: (paths) => reindexPaths(repo, commit, draft, paths, engines),
    ...opts,
  })
}

export async function loadFullRevision(
  repo: GitRepository,
  commit: string,
  empty: RuleIndex,
  engines: EngineRegistry,
  log?: Logger,
  memo?: IdentityMemo,
): Promise<RuleIndex> {
  const files = await repo.listFiles(commit)
  const draft = empty.draft()
  const yaml = files.filter((f) => isYamlPath(f.path)).map((f) => f.path)
  const started = Date.now()
  const read: string[] = []
  for (let i = 0; i < yaml.length; i += 1000) {
    read.push(...(await reindexPaths(repo, commit, draft, yaml.slice(i, i + 1000), engines, memo)))
    if (yaml.length > 2000) log?.info({ done: read.length, total: yaml.length }, 'full index build progress')
  }
  await syncPython(repo, commit, draft, read, engines, { log })
  log?.info({ files: read.length, ms: Date.now() - started }, 'full index build done')
  return draft.publish(commit)
}

/**
 * Feeds every commit after the tracker's head up to `to` (first-parent) to the history tracker.
 * A cold build (no cached head, or history rewritten) reads the commit list and each commit's
 * changed files from one `git log --raw` where git is installed (results are the same: the tracker
 * sees the same changes in path order), else walks the trees itself.
 */
export async function catchUpHistory(
  repo: GitRepository,
  history: HistoryTracker,
  to: string,
  log?: Logger,
  memo?: IdentityMemo,
  opts: { gitBinary?: boolean } = {},
): Promise<void> {
  let chain = history.head === null ? null : await repo.firstParentChain(history.head, to)
  if (!chain) {
    history.reset()
    if ((opts.gitBinary ?? true) && gitBinaryAvailable()) {
      try {
        await replayWithGitLog(repo, history, to, log, memo)
        return
      } catch (err) {
        log?.warn({ msg: (err as Error).message }, 'git log could not list the history; walking it in-process')
        history.reset()
      }
    }
    chain = (await repo.firstParentChain(null, to))!
  }
  if (chain.length > 200) log?.info({ commits: chain.length }, 'building history metadata')
  let n = 0
  for (const c of chain) {
    history.apply(c, await changesOf(repo, await repo.diff(c.parents[0] ?? null, c.oid), memo))
    if (++n % 5000 === 0) log?.info({ done: n, total: chain.length }, 'history metadata progress')
  }
}

/** The tracker's view of a commit's changed files: the text (or known identity) of each YAML file. */
async function changesOf(
  repo: GitRepository,
  diffs: readonly FileDiff[],
  memo?: IdentityMemo,
): Promise<CommitFileChange[]> {
  return Promise.all(
    diffs.map(async (d): Promise<CommitFileChange> => {
      const known = d.newOid && isYamlPath(d.path) ? memo?.get(d.newOid) : undefined
      if (known) return { path: d.path, text: null, identity: known }
      const text =
        d.newOid && isYamlPath(d.path) ? (await repo.readBlob(d.newOid)).toString('utf8') : d.newOid ? '' : null
      return { path: d.path, text }
    }),
  )
}

/** Commits read ahead of the one being applied, so reads through `git cat-file` overlap. */
const READ_AHEAD = 256

async function replayWithGitLog(
  repo: GitRepository,
  history: HistoryTracker,
  to: string,
  log?: Logger,
  memo?: IdentityMemo,
): Promise<void> {
  const commits = await firstParentLog(repo.gitdir, to)
  if (commits.length > 200) log?.info({ commits: commits.length }, 'building history metadata (git log)')
  const load = (c: LoggedCommit) => Promise.all([repo.readCommit(c.oid), changesOf(repo, c.changes, memo)])
  const ahead: Array<ReturnType<typeof load>> = []
  let next = 0
  for (let n = 1; n <= commits.length; n++) {
    while (ahead.length < READ_AHEAD && next < commits.length) {
      const p = load(commits[next++]!)
      p.catch(() => {}) // awaited in order below; this only keeps an early failure from being "unhandled"
      ahead.push(p)
    }
    const [info, changes] = await ahead.shift()!
    history.apply(info, changes)
    if (n % 5000 === 0) log?.info({ done: n, total: commits.length }, 'history metadata progress')
  }
  if (commits[commits.length - 1]?.oid !== to) throw new Error(`git log did not end at ${to}`)
}
