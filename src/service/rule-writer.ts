// The one writer of the repository: an in-process queue whose pending writes are committed as a
// chain (one commit per write) with one round of fsyncs and one compare-and-swap of the branch:
// group commit. If the branch moved under a batch (a plain `git push`) or, with a remote, the push
// was rejected because the remote moved, the index catches up and the batch is rebuilt on the new
// tip, re-checking every precondition: for a time budget, pushing fewer writes per attempt while
// the tip keeps moving (see RetryPolicy and docs/decisions.md).
import path from 'node:path'
import { conflict, notFound, RulekeeperError, unavailable } from '../errors.js'
import { RemoteError } from '../git/remote.js'
import type { RuleKind } from '../rules/model.js'
import { newRulePaths, pythonPathFor } from '../rules/paths.js'
import { foldId } from '../rules/rule-id.js'
import { renderRuleFile } from '../rules/rule-file.js'
import type { IndexDraft, IndexedRule, RuleIndex } from '../rules/rule-index.js'
import type { Person } from '../git/git-commit.js'
import { ObjectBatch } from '../git/write-object-loose.js'
import { RefConflictError } from '../git/ref-cas.js'
import type { FileChanges } from '../git/tree-edit.js'
import { buildFileRecord } from './file-records.js'
import type { Actor, CommitFileChange } from './history.js'
import { draftContext } from './revision-sync.js'
import { formatTrailers } from './trailers.js'
import type { RuleStore } from './rule-store.js'

export interface WriteActor extends Actor {
  /** Shown as the commit author's name. */
  name: string
  email: string
}

export type WriteOp =
  | { type: 'create' | 'replace'; kind: RuleKind; id: string; data: Record<string, unknown>; pythonSource?: string; actor: WriteActor; requestId: string; reason?: string }
  | { type: 'delete'; kind: RuleKind; id: string; actor: WriteActor; requestId: string; reason?: string }

export type WriteOutcome = {
  status: 'created' | 'updated' | 'unchanged' | 'deleted'
  commit: string | null
  /** The rule as this write left it (a later write of the same batch may change it again). */
  rule?: IndexedRule
}

interface Pending {
  op: WriteOp
  resolve(o: WriteOutcome): void
  reject(e: unknown): void
}

const KIND_LABEL: Record<RuleKind, string> = { simple: 'simple', scheduled: 'scheduled', correlation: 'correlation' }
export const MAX_BATCH = 64

/** How a batch retries when the branch or the remote moves under it (see docs/decisions.md). */
export interface RetryPolicy {
  /**
   * Retrying stops when none of the batch's writes went through for this long (since the batch
   * started or since its last successful attempt): the writes not made answer 503.
   */
  budgetMs: number
  /** And in any case once the batch has taken this long (a bound on how long a caller waits). */
  capMs: number
  /**
   * Rejections in a row after which fewer writes go per attempt (halved, down to one): a smaller
   * attempt is built and pushed sooner, so a busy remote has less time to move under it. Each
   * attempt that goes through doubles the size again.
   */
  splitAfter: number
  /** Backoff before retry n: a random delay in [0, min(maxMs, firstMs * 2^(n-1))). */
  backoff: { firstMs: number; maxMs: number }
  /** For this long after a push was refused, a batch fetches the remote's tip before building. */
  contendedMs: number
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { budgetMs: 20_000, capMs: 60_000, splitAfter: 1, backoff: { firstMs: 10, maxMs: 100 }, contendedMs: 5_000 }

function backoffMs(policy: RetryPolicy, retry: number): number {
  const ceiling = Math.min(policy.backoff.maxMs, policy.backoff.firstMs * 2 ** Math.min(retry - 1, 20))
  return Math.random() * ceiling
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

function holderLabel(draft: IndexDraft, id: string): string | undefined {
  for (const p of draft.holdersOf(id)) {
    const f = draft.getFile(p)
    if (f?.kind) return `a ${f.kind} rule (${p})`
    if (f) return `a ${f.analysisType ?? 'analysis'} file (${p})`
  }
  return undefined
}

export function commitMessage(verb: string, op: WriteOp): string {
  const reason = (op.reason ?? '').replace(/\r\n?/g, '\n').replace(/\0/g, '').trim()
  // Every value must be one line (formatTrailers throws otherwise): the id was checked on the way in.
  const trailers = formatTrailers([
    ['Rule-Id', op.id],
    ['Rule-Kind', KIND_LABEL[op.kind]],
    ['Actor-Id', op.actor.id],
    ['Actor-Type', op.actor.type],
    ['Request-Id', op.requestId],
  ])
  return `${verb} ${KIND_LABEL[op.kind]} rule ${op.id}\n\n${reason ? `${reason}\n\n` : ''}${trailers}\n`
}

export class RuleWriter {
  private queue: Pending[] = []
  private running = false
  /** Replaceable (tests use a short budget). */
  policy: RetryPolicy = DEFAULT_RETRY_POLICY
  /** When a batch last found the branch or the remote moved (0: never). */
  private lastMovedAt = 0

  constructor(private readonly store: RuleStore) {}

  submit(op: WriteOp): Promise<WriteOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ op, resolve, reject })
      if (!this.running) void this.drain()
    })
  }

  /** Waits until every queued write is done (used at shutdown). */
  async idle(): Promise<void> {
    while (this.running || this.queue.length > 0) await sleep(5)
  }

  private async drain(): Promise<void> {
    this.running = true
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_BATCH)
        // Every write of the batch is settled by commitBatch (a settled promise ignores a second call).
        await this.commitBatch(batch).catch((err: unknown) => {
          for (const p of batch) p.reject(err)
        })
      }
    } finally {
      this.running = false
    }
  }

  private commitBatch(batch: Pending[]): Promise<void> {
    return this.store.exclusive(() => this.commitBatchExclusive(batch))
  }

  /**
   * Commits the batch, retrying while the branch (or the remote) moves under it: each retry rebuilds
   * the writes still pending on the new tip, re-checking every precondition. After `splitAfter`
   * rejections in a row fewer writes go per attempt (halved, down to one), so progress is made even
   * while the remote moves constantly. When the time budget is spent, the writes not yet made answer
   * 503 and nothing of them is left behind (the local branch only ever follows the remote's tip).
   */
  private async commitBatchExclusive(batch: Pending[]): Promise<void> {
    const policy = this.policy
    const started = Date.now()
    let progressAt = started
    let rest = batch
    let size = batch.length
    let retries = 0 // since the last progress
    let streak = 0
    // While the remote is busy, look at its tip first rather than push on a stale one and be refused.
    let fetchFirst = this.store.remote !== undefined && started - this.lastMovedAt < policy.contendedMs
    try {
      while (rest.length > 0) {
        const part = rest.slice(0, size)
        const moved = await this.attempt(part, fetchFirst)
        if (!moved) {
          rest = rest.slice(part.length)
          progressAt = Date.now()
          retries = 0
          streak = 0
          fetchFirst = false
          size = Math.min(MAX_BATCH, size * 2) // it went through: try more at once again
          continue
        }
        this.lastMovedAt = Date.now()
        retries++
        streak++
        const now = Date.now()
        const elapsed = now - progressAt
        if (elapsed >= policy.budgetMs || now - started >= policy.capMs) {
          const what = moved === 'remote' ? `the remote ${this.store.remote?.displayUrl ?? ''} kept moving` : 'the branch kept moving (commits pushed into the repository)'
          this.store.logger.warn({ writes: rest.length, made: batch.length - rest.length, retries, ms: now - started }, 'write retry budget spent')
          throw unavailable(`${what}: retried ${retries} ${retries === 1 ? 'time' : 'times'} in ${(elapsed / 1000).toFixed(1)} s; the write was not made, try again`)
        }
        if (streak >= policy.splitAfter && size > 1) {
          size = Math.ceil(size / 2)
          streak = 0
        }
        // The backoff comes before looking at the new tip: the time from seeing it to pushing is
        // what a concurrent push can spoil.
        await sleep(backoffMs(policy, retries))
        fetchFirst = moved === 'remote'
      }
    } catch (err) {
      for (const p of rest) p.reject(err)
    }
  }

  /**
   * One attempt at committing `part` on the current tip (the remote's, fetched first when asked).
   * Settles every write of `part` and returns false, or returns where the tip moved: nothing of
   * `part` was settled or kept, and the caller retries.
   */
  private async attempt(part: Pending[], fetchFirst: boolean): Promise<false | 'remote' | 'branch'> {
    const s = this.store
    if (fetchFirst && s.remote) {
      let tip: string | null
      try {
        tip = await s.remote.fetch()
      } catch (err) {
        throw err instanceof RemoteError ? unavailable(err.message) : err
      }
      if (tip) await s.followRemoteTip(tip)
    }
    await s.syncForWrite()
    const base = s.index
    const draft = base.draft()
    const objects = new ObjectBatch()
    let parent = base.revision
    let tree = await s.repo.treeOf(parent)
    const outcomes: Array<WriteOutcome | RulekeeperError> = []
    const commits: Array<{ oid: string; message: string; author: Person; changes: CommitFileChange[] }> = []
    for (const p of part) {
      try {
        const planned = await this.plan(p.op, draft, tree, objects)
        if (!planned) {
          outcomes.push({ status: 'unchanged', commit: null, rule: draft.ruleById(p.op.id) })
          continue
        }
        const now = Math.floor(Date.now() / 1000)
        const author: Person = { name: p.op.actor.name, email: p.op.actor.email, timestamp: now, tzOffsetMinutes: 0 }
        const committer: Person = { ...s.committer, timestamp: now, tzOffsetMinutes: 0 }
        const message = commitMessage(planned.verb, p.op)
        const built = await s.repo.buildCommit(objects, { parent, changes: planned.changes, author, committer, message }, tree)
        parent = built.commit
        tree = built.tree
        await this.applyToDraft(draft, planned.changes)
        commits.push({
          oid: built.commit,
          message,
          author,
          changes: [...planned.changes].map(([p2, c]) => ({ path: p2, text: c === null ? null : c.toString('utf8') })),
        })
        outcomes.push({ status: planned.status, commit: built.commit, rule: draft.ruleById(p.op.id) })
      } catch (err) {
        if (!(err instanceof RulekeeperError)) throw err
        outcomes.push(err)
      }
    }
    let published = true
    if (commits.length > 0) {
      await s.repo.writeObjects(objects)
      if (s.remote) {
        // The remote is the truth: the writes count only once the remote has them.
        try {
          await s.remote.push(parent!, base.revision)
        } catch (err) {
          if (err instanceof RemoteError && err.kind === 'rejected') {
            s.metrics.pushRetries.inc()
            return 'remote' // the next attempt fetches the new tip and rebuilds on it
          }
          if (!(err instanceof RemoteError)) throw err
          s.logger.warn({ reason: err.kind, msg: err.message, detail: err.detail }, 'a write batch could not be pushed')
          throw unavailable(err.message)
        }
        // Pushed: the writes are made whatever happens next; the local branch just follows.
        published = await this.followPushed(parent!)
      } else {
        try {
          await s.repo.moveBranch(base.revision, parent!)
        } catch (err) {
          if (!(err instanceof RefConflictError)) throw err
          s.metrics.rebuilds.inc()
          return 'branch' // the next attempt catches the index up and rebuilds on the new tip
        }
      }
      if (published) {
        for (const c of commits) s.history.apply(c, c.changes)
        s.publish(draft.publish(parent))
      }
      s.metrics.commits.inc(commits.length)
    }
    part.forEach((p, i) => {
      const o = outcomes[i]!
      if (o instanceof RulekeeperError) p.reject(o)
      else p.resolve(o)
    })
    return false
  }

  /**
   * Moves the local branch to a commit the remote just accepted. Never a reason to rebuild (that
   * would push the writes twice) nor to refuse them (they are made): if the local branch cannot
   * follow, the writes are acknowledged anyway and the next fetch and sync catch up.
   */
  private async followPushed(commit: string): Promise<boolean> {
    for (let i = 0; ; i++) {
      try {
        await this.store.followRemoteTip(commit)
        return true
      } catch (err) {
        if (err instanceof RefConflictError && i < 4) {
          await sleep(20)
          continue
        }
        this.store.logger.warn({ commit, msg: (err as Error).message }, 'pushed, but the local branch could not follow; the next sync catches up')
        return false
      }
    }
  }

  /** The file changes of one write against the draft, or null when it changes nothing. */
  private async plan(op: WriteOp, draft: IndexDraft, tree: string | null, objects: ObjectBatch): Promise<{ verb: string; status: WriteOutcome['status']; changes: FileChanges } | null> {
    const existing: IndexedRule | undefined = draft.ruleById(op.id)
    const holder = holderLabel(draft, op.id)
    if (op.type === 'delete') {
      if (!existing || existing.kind !== op.kind) throw notFound(`${op.kind} rule ${op.id} not found`)
      const changes: FileChanges = new Map([[existing.path, null]])
      if (existing.pythonPath) changes.set(existing.pythonPath, null)
      return { verb: 'Delete', status: 'deleted', changes }
    }
    if (op.type === 'create' && holder) throw conflict(`id ${op.id} already exists: ${holder}`)
    if (holder && (!existing || existing.kind !== op.kind)) throw conflict(`id ${op.id} belongs to ${holder}`)
    const twin = holder ? undefined : draft.caseTwinOf(op.id)
    if (twin !== undefined) throw conflict(`id ${op.id} differs only by case from the existing id ${twin}, ${holderLabel(draft, twin) ?? 'in the repository'}; ids are unique ignoring case`)
    const repo = this.store.repo
    if (existing) {
      const oldYaml = await repo.blobAt(tree, existing.path)
      const oldText = oldYaml ? (await readBlobOf(repo, objects, oldYaml)).toString('utf8') : undefined
      const data = { ...op.data }
      if (op.kind === 'scheduled') data.Filename = existing.file.data.Filename ?? path.posix.basename(existing.pythonPath ?? '')
      const text = renderRuleFile(op.kind, reorderFilename(data), oldText)
      const changes: FileChanges = new Map()
      if (text !== oldText) changes.set(existing.path, Buffer.from(text))
      if (op.kind === 'scheduled') {
        const py = existing.pythonPath ?? pythonPathFor(existing.path, String(data.Filename))
        if ((op.pythonSource ?? '') !== (existing.file.pythonSource ?? '')) changes.set(py, Buffer.from(op.pythonSource ?? ''))
      }
      if (changes.size === 0) return null
      return { verb: 'Update', status: 'updated', changes }
    }
    let yamlPath: string | undefined
    for (const candidate of newRulePaths(op.kind, op.id)) {
      const py = op.kind === 'scheduled' ? pythonPathFor(candidate) : undefined
      // Taken also when an existing path differs only by case: both could not live in one clone.
      const taken = async (p: string) => draft.getFile(p) !== undefined || (await repo.pathsLike(tree, p, foldId)).length > 0
      if (!(await taken(candidate)) && !(py && (await taken(py)))) {
        yamlPath = candidate
        break
      }
    }
    if (!yamlPath) throw conflict(`no free file name for id ${op.id}`)
    const changes: FileChanges = new Map()
    const data = { ...op.data }
    if (op.kind === 'scheduled') {
      const py = pythonPathFor(yamlPath)
      data.Filename = path.posix.basename(py)
      changes.set(py, Buffer.from(op.pythonSource ?? ''))
    }
    changes.set(yamlPath, Buffer.from(renderRuleFile(op.kind, reorderFilename(data))))
    return { verb: 'Create', status: 'created', changes }
  }

  private async applyToDraft(draft: IndexDraft, changes: FileChanges): Promise<void> {
    const texts = new Map([...changes].map(([p, c]) => [p, c === null ? undefined : c.toString('utf8')]))
    const src = {
      engines: this.store.engines,
      ctx: draftContext(draft),
      readFile: async (p: string) => {
        if (texts.has(p)) return texts.get(p)
        // An unchanged .py beside a changed YAML: its source is the one the draft already holds.
        for (const yamlPath of changes.keys()) {
          const rule = draft.getFile(yamlPath)?.rule
          if (rule?.pythonPath === p) return rule.file.pythonSource
        }
        return undefined
      },
    }
    for (const [p, c] of changes) {
      if (!/\.ya?ml$/i.test(p)) continue
      if (c === null) {
        draft.removeFile(p)
        continue
      }
      const rec = await buildFileRecord(p, c.toString('utf8'), src, draft.getFile(p))
      if (rec) draft.putFile(rec)
    }
  }
}

/** A blob's content: from the batch when an earlier write of the same batch made it (not on disk yet). */
async function readBlobOf(repo: RuleStore['repo'], objects: ObjectBatch, oid: string): Promise<Buffer> {
  const raw = objects.objects.get(oid)
  return raw ? raw.subarray(raw.indexOf(0) + 1) : repo.readBlob(oid)
}

/** `Filename` goes right after `AnalysisType` in files the service creates. */
function reorderFilename(data: Record<string, unknown>): Record<string, unknown> {
  if (!('Filename' in data)) return data
  const { AnalysisType, Filename, ...rest } = data
  return { AnalysisType, Filename, ...rest }
}
