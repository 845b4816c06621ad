// Reads of a rule's past for the history routes: the page of its commits (from the id → commits
// index of rule-log.ts, newest first, every life, moves followed), the rule as it was at a revision
// (with the metadata it had then), the diff of its files between two revisions (bounded, large ones
// in a worker: diff-offload.ts), the files a restore brings back, and the ETag of the rule served
// now (etag.ts; cached per indexed rule).
import { badRequest, notFound } from '../errors.js'
import type { EngineRegistry } from '../engine/engine.js'
import type { GitRepository } from '../git/repository.js'
import type { RuleKind } from '../rules/model.js'
import { isYamlPath, pythonPathFor } from '../rules/paths.js'
import { parseAnalysisFile } from '../rules/rule-file.js'
import type { IndexedRule, RuleIndex } from '../rules/rule-index.js'
import { ruleEtag } from './etag.js'
import { buildFileRecord } from './file-records.js'
import { quickIdentity, type HistoryTracker, type RuleHistory, type Stamp } from './history.js'
import type { ChangeKind, LogEntry } from './rule-log.js'
import { indexContext, ruleRepresentation } from './rule-views.js'
import { unifiedDiffOffThread } from './diff-offload.js'

export interface HistoryItem {
  revision: string
  parent: string | null
  time: string
  actor: Stamp['actor']
  authorName: string
  reason: string | null
  change: ChangeKind
  paths: string[]
  /** A merged pull request (merge-credit.ts): who merged it, every author of its commits. */
  mergedBy?: Stamp['actor']
  authors?: Array<Stamp['actor']>
}

/** Where a history page ends: the commit before which the next page starts, and its position. */
export interface HistoryPosition {
  commit: string
  n: number
}

export interface HistoryReadDeps {
  repo: GitRepository
  catalog: { readonly index: RuleIndex; readonly history: HistoryTracker }
  engines: EngineRegistry
}

/** A rule's files at one revision: its YAML (found by RuleID) and its `.py` companion. */
export interface RuleFilesAt {
  revision: string
  yamlPath: string
  files: Map<string, Buffer>
}

const FULL_OID = /^[0-9a-f]{40}$/

export class RuleHistoryReads {
  private readonly etags = new WeakMap<IndexedRule, string>()
  private tipTree: { revision: string | null; tree: Promise<string | null> } | undefined
  /** `${id}\0${commit}` → the kind of the id's YAML at that commit (deleted ids only). */
  private readonly kinds = new Map<string, RuleKind | undefined>()

  constructor(private readonly d: HistoryReadDeps) {}

  /** The ETag of the rule as served now (blob ids of its files in the served revision). */
  async etag(rule: IndexedRule): Promise<string> {
    const hit = rule.stale ? undefined : this.etags.get(rule)
    if (hit) return hit
    const revision = this.d.catalog.index.revision
    if (this.tipTree?.revision !== revision) this.tipTree = { revision, tree: this.d.repo.treeOf(revision) }
    const tag = await ruleEtag(this.d.repo, await this.tipTree.tree, rule)
    // A stale rule is served from an older file than the one in the tree: its tag follows the tree.
    if (!rule.stale) this.etags.set(rule, tag)
    return tag
  }

  /**
   * One page of the id's history, newest first; `after` is the `next` of the previous page (the
   * commit the page ends before and its position; api/query.ts makes it a cursor).
   */
  async page(
    kind: RuleKind,
    id: string,
    after: HistoryPosition | undefined,
    limit: number,
  ): Promise<{ results: HistoryItem[]; next: HistoryPosition | null }> {
    const entries = await this.entriesOf(kind, id)
    let end = entries.length
    if (after !== undefined) end = this.positionOf(entries, after)
    const start = Math.max(0, end - limit)
    const results: HistoryItem[] = []
    for (let i = end - 1; i >= start; i--) results.push(this.item(entries[i]!))
    return { results, next: start > 0 ? { commit: entries[start]!.commit, n: start } : null }
  }

  /** The rule as it was at `revision`: its representation with the metadata of then, and `revision`. */
  async representationAt(kind: RuleKind, id: string, revision: string): Promise<Record<string, unknown>> {
    const { rule, at } = await this.ruleAt(kind, id, revision)
    const meta = await this.metadataAt(id, at.revision)
    const rc = {
      index: this.d.catalog.index,
      history: { get: (x: string) => (x === id ? meta : undefined) },
      engines: this.d.engines,
    }
    return { ...ruleRepresentation(rc, rule), revision: at.revision }
  }

  /** The rule (parsed and checked) and its files at `revision`: 404 where it was not a valid rule of the kind. */
  async ruleAt(kind: RuleKind, id: string, revision: string): Promise<{ rule: IndexedRule; at: RuleFilesAt }> {
    await this.entriesOf(kind, id)
    const at = await this.filesAt(id, await this.resolve(id, revision))
    const missing = () => notFound(`${kind} rule ${id} did not exist at revision ${revision}`)
    if (!at) throw missing()
    const text = at.files.get(at.yamlPath)!.toString('utf8')
    const rec = await buildFileRecord(at.yamlPath, text, {
      engines: this.d.engines,
      ctx: indexContext(this.d.catalog.index),
      readFile: async (p) => at.files.get(p)?.toString('utf8'),
    })
    if (!rec?.rule || rec.rule.kind !== kind) {
      if (rec?.kind && rec.kind !== kind) throw missing()
      throw notFound(
        `${kind} rule ${id} was not a valid rule at revision ${revision}; its files can be compared with /diff`,
      )
    }
    return { rule: rec.rule, at }
  }

  /** `{ from, to, files: [{ path, unifiedDiff }] }` of the id's files between two revisions (`to`: the tip). */
  async diff(
    kind: RuleKind,
    id: string,
    from: string,
    to: string | undefined,
  ): Promise<{ from: string; to: string; files: Array<{ path: string; unifiedDiff: string }> }> {
    await this.entriesOf(kind, id)
    const tip = this.d.catalog.index.revision
    if (to === undefined && tip === null) throw notFound('the repository has no commit yet')
    const a = await this.resolve(id, from)
    const b = to === undefined ? tip! : await this.resolve(id, to)
    const [fa, fb] = await Promise.all([this.filesAt(id, a), this.filesAt(id, b)])
    const paths = [...new Set([...(fa?.files.keys() ?? []), ...(fb?.files.keys() ?? [])])].sort()
    const files: Array<{ path: string; unifiedDiff: string }> = []
    for (const p of paths) {
      const before = fa?.files.get(p)
      const after = fb?.files.get(p)
      if (before && after && before.equals(after)) continue
      files.push({
        path: p,
        unifiedDiff: await unifiedDiffOffThread(p, before?.toString('utf8') ?? null, after?.toString('utf8') ?? null),
      })
    }
    return { from: a, to: b, files }
  }

  /** The id's entries, oldest first; 404 when it has none or its (last) kind is another. */
  private async entriesOf(kind: RuleKind, id: string): Promise<readonly LogEntry[]> {
    const entries = this.d.catalog.history.log.of(id)
    const none = () => notFound(`${kind} rule ${id} has no history`)
    if (entries.length === 0) throw none()
    const current = this.d.catalog.index.rules.get(id)
    const k = current ? current.kind : await this.lastKind(id, entries)
    if (k !== kind) throw none()
    return entries
  }

  /** The kind of a deleted id: that of its YAML in the last commit where it existed. */
  private async lastKind(id: string, entries: readonly LogEntry[]): Promise<RuleKind | undefined> {
    const last = [...entries].reverse().find((e) => e.change !== 'deleted')
    if (!last) return undefined
    const key = `${id}\0${last.commit}`
    if (this.kinds.has(key)) return this.kinds.get(key)
    const at = await this.filesAt(id, last.commit)
    const kind = at ? parseAnalysisFile(at.yamlPath, at.files.get(at.yamlPath)!.toString('utf8')).kind : undefined
    this.kinds.set(key, kind)
    return kind
  }

  private item(e: LogEntry): HistoryItem {
    const c = this.d.catalog.history.log.commit(e.commit)!
    return {
      revision: e.commit,
      parent: c.parent,
      time: c.time,
      actor: c.actor,
      authorName: c.authorName,
      reason: c.reason,
      change: e.change,
      paths: e.paths,
      ...(c.mergedBy ? { mergedBy: c.mergedBy, authors: c.authors ?? [] } : {}),
    }
  }

  /** Where a page position lies now (the history may have grown since: the commit is looked up). */
  private positionOf(entries: readonly LogEntry[], at: HistoryPosition): number {
    if (entries[at.n]?.commit === at.commit) return at.n
    const i = entries.findIndex((e) => e.commit === at.commit)
    if (i < 0) throw badRequest("cursor is not valid: it names no commit of this rule's history")
    return i
  }

  /** A full commit id: given in full (and present), or an abbreviation of one of the id's commits. */
  private async resolve(id: string, revision: string): Promise<string> {
    const rev = revision.toLowerCase()
    if (!/^[0-9a-f]{4,40}$/.test(rev))
      throw badRequest(`revision must be a commit id (4 to 40 hex digits); got ${revision}`)
    if (FULL_OID.test(rev)) {
      if (await this.d.repo.hasCommit(rev)) return rev
      throw notFound(`no commit ${revision} in the repository`)
    }
    const hits = [...new Set(this.d.catalog.history.log.of(id).map((e) => e.commit))].filter((c) => c.startsWith(rev))
    if (hits.length === 1) return hits[0]!
    if (hits.length > 1) throw badRequest(`revision ${revision} is ambiguous; give more digits`)
    throw notFound(`no commit ${revision} in the history of ${id}; give the full commit id`)
  }

  /** The id's files at a revision, or null when no YAML file held the id there. */
  async filesAt(id: string, revision: string): Promise<RuleFilesAt | null> {
    const { repo, catalog } = this.d
    const tree = await repo.treeOf(revision)
    const candidates = new Set<string>()
    const current = catalog.index.rules.get(id)
    const entries = catalog.history.log.of(id)
    // Every YAML path the id ever had, newest first, and its current one.
    for (let i = entries.length - 1; i >= 0; i--)
      for (const p of entries[i]!.paths) if (isYamlPath(p)) candidates.add(p)
    if (current) candidates.add(current.path)
    for (const p of candidates) {
      const oid = await repo.blobAt(tree, p)
      if (!oid) continue
      const bytes = await repo.readBlob(oid)
      const identity = quickIdentity(bytes.toString('utf8'))
      if (identity.id !== id) continue
      const files = new Map([[p, bytes]])
      if (identity.filename) {
        let py: string | undefined
        try {
          py = pythonPathFor(p, identity.filename)
        } catch {
          py = undefined
        }
        const pyOid = py ? await repo.blobAt(tree, py) : null
        if (py && pyOid) files.set(py, await repo.readBlob(pyOid))
      }
      return { revision, yamlPath: p, files }
    }
    return null
  }

  /** createdAt/By and lastModified/By as they were at `revision` (undefined off the first-parent chain). */
  private async metadataAt(id: string, revision: string): Promise<RuleHistory | undefined> {
    const { history } = this.d.catalog
    const entries = history.log.of(id)
    let seq = entries.find((e) => e.commit === revision)?.seq
    if (seq === undefined && history.head) {
      const chain = await this.d.repo.firstParentChain(revision, history.head)
      if (chain) seq = history.log.seq - chain.length
    }
    if (seq === undefined) return undefined
    const upTo = entries.filter((e) => e.seq <= seq!)
    const modified = upTo[upTo.length - 1]
    const created = [...upTo].reverse().find((e) => e.change === 'created')
    if (!modified || !created) return undefined
    const stamp = (e: LogEntry): Stamp => {
      const c = history.log.commit(e.commit)!
      return { commit: e.commit, at: c.time, actor: c.actor }
    }
    return { created: stamp(created), modified: stamp(modified) }
  }
}
