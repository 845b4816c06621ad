// Bringing the index and the history metadata up to a revision of the repository: a full load
// (first start, rewritten history) or an incremental one along the first-parent chain (commits
// pushed with plain git, a reconcile). Only changed files are re-read, each sized before it is read
// (over rules.maxFileBytes: invalid, never read), a bounded window of them in flight, the event loop
// given back between files (turn-budget.ts).
import type { EngineContext, EngineRegistry } from '../engine/engine.js'
import { inLoadOrder } from '../rules/kinds/index.js'
import { dataModelsByLogType } from '../rules/data-models.js'
import { isYamlPath } from '../rules/paths.js'
import type { IndexDraft, RuleIndex } from '../rules/rule-index.js'
import { gitBinaryAvailable } from '../git/git-binary.js'
import { mergedCommits } from '../git/merged-commits.js'
import { firstParentLog, type LoggedCommit } from '../git/git-log.js'
import type { GitRepository } from '../git/repository.js'
import type { FileDiff } from '../git/tree-diff.js'
import { buildFileRecord, ownersOfPython, type RecordSources } from './file-records.js'
import { checkDraftPython } from './python-check.js'
import { quickIdentity, type CommitFileChange, type HistoryTracker, type Identity } from './history.js'
import type { Logger } from '../log.js'
import { RulekeeperError } from '../errors.js'
import { DEFAULT_BOUNDS, fileTooLarge } from '../rules/repository-bounds.js'
import type { FileEntry } from '../git/tree-diff.js'
import { TurnBudget } from '../turn-budget.js'

/** How a revision is read: the file limit, the identities learned for the history walk. */
export interface ReadOptions {
  /** Files over this many bytes are invalid and never read (rules.maxFileBytes). */
  maxFileBytes?: number
  memo?: IdentityMemo
}

/** Blobs sized and read ahead of the file being indexed: what one reconcile holds in memory at most. */
const READ_WINDOW = 64

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
  maxFileBytes: number,
): RecordSources {
  return {
    engines,
    ctx: draftContext(draft),
    async readFile(p) {
      const oid = await repo.blobAt(tree, p)
      if (!oid) return undefined
      const size = await repo.blobSize(oid)
      if (size > maxFileBytes) throw new RulekeeperError('PayloadTooLarge', fileTooLarge(size, maxFileBytes, p).message)
      return (await repo.readBlob(oid)).toString('utf8')
    },
  }
}

/**
 * Records for tree entries whose name no checkout can hold (`..`, `.git`, …): reported as invalid
 * paths, never read or served. `entries` are diff or listing entries carrying `badName`.
 */
export function putBadNames(
  draft: IndexDraft,
  entries: Iterable<Pick<FileEntry, 'path' | 'badName'> & { present: boolean }>,
): void {
  for (const e of entries) {
    if (!e.badName) continue
    if (!e.present) draft.removeFile(e.path)
    else
      draft.putFile({
        path: e.path,
        errors: [{ path: [], message: `invalid path: ${e.badName.reason}; nothing under it is read or served` }],
        bytes: 0,
        badNameIn: e.badName.folder,
      })
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
  opts: ReadOptions = {},
): Promise<string[]> {
  const { memo } = opts
  const max = opts.maxFileBytes ?? DEFAULT_BOUNDS.maxFileBytes
  const tree = await repo.treeOf(commit)
  const src = sourcesFor(repo, tree, draft, engines, max)
  const yamlPaths = new Set<string>()
  for (const p of paths) {
    if (isYamlPath(p)) yamlPaths.add(p)
    else if (p.endsWith('.py')) for (const owner of ownersOfPython(draft.allFiles(), p)) yamlPaths.add(owner)
  }
  // Two passes so that a correlation rule is checked against the rules changed with it.
  const ordered = inLoadOrder(yamlPaths)
  // A window of blobs is sized and read ahead of the one used (packed reads through git cat-file
  // overlap); a blob over the limit is sized only. At most READ_WINDOW contents are held at once.
  const fetch = async (p: string) => {
    const oid = await repo.blobAt(tree, p)
    if (!oid) return { oid, size: 0, text: undefined }
    const size = await repo.blobSize(oid)
    return { oid, size, text: size > max ? undefined : (await repo.readBlob(oid)).toString('utf8') }
  }
  const ahead: Array<ReturnType<typeof fetch>> = []
  const start = (i: number) => {
    if (i >= ordered.length) return
    const job = fetch(ordered[i]!)
    job.catch(() => {}) // awaited in order below
    ahead[i] = job
  }
  for (let i = 0; i < READ_WINDOW; i++) start(i)
  const turns = new TurnBudget()
  for (let i = 0; i < ordered.length; i++) {
    const p = ordered[i]!
    start(i + READ_WINDOW)
    const { oid, size, text } = await ahead[i]!
    delete ahead[i]
    await turns.pass()
    if (!oid) {
      draft.removeFile(p)
      continue
    }
    const prev = draft.getFile(p)
    if (text === undefined) {
      // Too large to read: invalid with that reason; the rule's last good version keeps serving.
      memo?.set(oid, {})
      draft.putFile({
        path: p,
        id: prev?.id,
        kind: prev?.kind,
        analysisType: prev?.analysisType,
        errors: [fileTooLarge(size, max)],
        bytes: size,
      })
      continue
    }
    // Identical blobs are scanned once (the identity is the blob's, whatever path holds it).
    if (memo && !memo.has(oid)) memo.set(oid, quickIdentity(text))
    const rec = await buildFileRecord(p, text, src, prev)
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
  opts: { before?: RuleIndex; retryUnchecked?: boolean; log?: Logger; maxFileBytes?: number } = {},
): Promise<void> {
  const { maxFileBytes, ...check } = opts
  return checkDraftPython(draft, {
    reread,
    engines,
    ctx: draftContext(draft),
    rereadMore: (paths) => reindexPaths(repo, commit, draft, paths, engines, { maxFileBytes }),
    ...check,
  })
}

export async function loadFullRevision(
  repo: GitRepository,
  commit: string,
  empty: RuleIndex,
  engines: EngineRegistry,
  log?: Logger,
  opts: ReadOptions = {},
): Promise<RuleIndex> {
  const files = await repo.listFiles(commit)
  const draft = empty.draft()
  putBadNames(
    draft,
    files.map((f) => ({ ...f, present: true })),
  )
  const yaml = files.filter((f) => !f.badName && isYamlPath(f.path)).map((f) => f.path)
  const started = Date.now()
  const read: string[] = []
  for (let i = 0; i < yaml.length; i += 1000) {
    read.push(...(await reindexPaths(repo, commit, draft, yaml.slice(i, i + 1000), engines, opts)))
    if (yaml.length > 2000) log?.info({ done: read.length, total: yaml.length }, 'full index build progress')
  }
  await syncPython(repo, commit, draft, read, engines, { log, maxFileBytes: opts.maxFileBytes })
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
  opts: { gitBinary?: boolean; maxFileBytes?: number } = {},
): Promise<void> {
  const max = opts.maxFileBytes ?? DEFAULT_BOUNDS.maxFileBytes
  let chain = history.head === null ? null : await repo.firstParentChain(history.head, to)
  if (!chain) {
    history.reset()
    if ((opts.gitBinary ?? true) && gitBinaryAvailable()) {
      try {
        await replayWithGitLog(repo, history, to, max, log, memo)
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
  const turns = new TurnBudget()
  for (const c of chain) {
    history.apply(
      c,
      await changesOf(repo, await repo.diff(c.parents[0] ?? null, c.oid), max, memo),
      await mergedCommits(repo.db, c),
    )
    await turns.pass()
    if (++n % 5000 === 0) log?.info({ done: n, total: chain.length }, 'history metadata progress')
  }
}

/**
 * The tracker's view of a commit's changed files: the text (or known identity) of each YAML file.
 * A file over the limit is sized, not read: it has no identity. Entries with a bad name are no files.
 */
async function changesOf(
  repo: GitRepository,
  diffs: readonly FileDiff[],
  maxFileBytes: number,
  memo?: IdentityMemo,
): Promise<CommitFileChange[]> {
  return Promise.all(
    diffs
      .filter((d) => !d.badName)
      .map(async (d): Promise<CommitFileChange> => {
        const yaml = d.newOid !== null && isYamlPath(d.path)
        const known = yaml ? memo?.get(d.newOid!) : undefined
        if (known) return { path: d.path, text: null, identity: known }
        if (yaml && (await repo.blobSize(d.newOid!)) > maxFileBytes) return { path: d.path, text: null, identity: {} }
        const text = yaml ? (await repo.readBlob(d.newOid!)).toString('utf8') : d.newOid ? '' : null
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
  maxFileBytes: number,
  log?: Logger,
  memo?: IdentityMemo,
): Promise<void> {
  const commits = await firstParentLog(repo.gitdir, to)
  if (commits.length > 200) log?.info({ commits: commits.length }, 'building history metadata (git log)')
  const load = (c: LoggedCommit) =>
    Promise.all([
      repo.readCommit(c.oid).then(async (info) => ({ info, merged: await mergedCommits(repo.db, info) })),
      changesOf(repo, c.changes, maxFileBytes, memo),
    ])
  const turns = new TurnBudget()
  const ahead: Array<ReturnType<typeof load>> = []
  let next = 0
  for (let n = 1; n <= commits.length; n++) {
    while (ahead.length < READ_AHEAD && next < commits.length) {
      const p = load(commits[next++]!)
      p.catch(() => {}) // awaited in order below; this only keeps an early failure from being "unhandled"
      ahead.push(p)
    }
    const [{ info, merged }, changes] = await ahead.shift()!
    history.apply(info, changes, merged)
    await turns.pass()
    if (n % 5000 === 0) log?.info({ done: n, total: commits.length }, 'history metadata progress')
  }
  if (commits[commits.length - 1]?.oid !== to) throw new Error(`git log did not end at ${to}`)
}
