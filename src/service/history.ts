// History-derived metadata (createdAt/By, lastModified/By) per rule id. Follows rules by RuleID,
// not by path, so moves keep their creation; a rule deleted and created again starts a new life.
// Processes each commit once, in order, and persists its state keyed by the last commit processed,
// so a restart or a write never re-walks history. Beside the metadata it keeps the id → commits
// index (rule-log.ts) that the history routes read. Actor trailers count only on the commits the
// service made (recorded in service-commits.ts, or signed with its key); any other commit is its
// git author's.
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { writeFileDurable, writeFileDurableSync } from '../durable-file.js'
import { parseYaml } from '../rules/yaml-text.js'
import type { CommitInfo } from '../git/git-commit.js'
import { isYamlPath } from '../rules/paths.js'
import { removeTempFiles } from './cache-files.js'
import { mergeCredit } from './merge-credit.js'
import { commitReason, RuleLog, type ChangeKind, type StoredLog } from './rule-log.js'
import { parseTrailers, singleTrailer } from './trailers.js'

export interface Actor {
  id: string
  type: 'user' | 'api-token' | 'system'
}

export interface Stamp {
  commit: string
  at: string
  actor: Actor
}

export interface RuleHistory {
  created: Stamp
  modified: Stamp
}

export interface CommitFileChange {
  path: string
  /** New text of the file, null when deleted. Only YAML files need their text. */
  text: string | null
  /** quickIdentity(text), when the caller already knows it (saves reading the blob). */
  identity?: Identity
}

export interface Identity {
  id?: string
  filename?: string
}

/** Per-path and per-id state: Maps, never plain objects (an id may be `__proto__` or `constructor`). */
interface State {
  head: string | null
  pathToId: Map<string, string>
  pyOwner: Map<string, string>
  meta: Map<string, RuleHistory>
  log: RuleLog
}

/** The cache file: the maps as entry lists (JSON objects would turn `__proto__` into a prototype). */
const CACHE_FORMAT = 'rulekeeper-history/6'
interface StoredState {
  format: typeof CACHE_FORMAT
  head: string | null
  pathToId: Array<[string, string]>
  pyOwner: Array<[string, string]>
  meta: Array<[string, RuleHistory]>
  log: StoredLog
}

const emptyState = (): State => ({
  head: null,
  pathToId: new Map(),
  pyOwner: new Map(),
  meta: new Map(),
  log: new RuleLog(),
})

function serializeState(s: State): string {
  const stored: StoredState = {
    format: CACHE_FORMAT,
    head: s.head,
    pathToId: [...s.pathToId],
    pyOwner: [...s.pyOwner],
    meta: [...s.meta],
    log: s.log.store(),
  }
  return JSON.stringify(stored)
}

function parseState(text: string): State | null {
  const s = JSON.parse(text) as Partial<StoredState> | null
  if (
    !s ||
    s.format !== CACHE_FORMAT ||
    !Array.isArray(s.pathToId) ||
    !Array.isArray(s.pyOwner) ||
    !Array.isArray(s.meta)
  )
    return null
  const log = RuleLog.load(s.log)
  if (!log) return null
  return {
    head: s.head ?? null,
    pathToId: new Map(s.pathToId),
    pyOwner: new Map(s.pyOwner),
    meta: new Map(s.meta),
    log,
  }
}

// Lines as YAML sees them: they end at \n or \r only, never at U+2028/U+2029 (as `^`/`$` with the
// `m` flag would), so a value holding `U+2028RuleID: X` cannot pass for the file's id.
const FAST_ID = /(?:^|[\r\n])(?:RuleID|PolicyID|QueryName):[ \t]*([A-Za-z0-9._:/@+-]+)[ \t]*(?=[\r\n]|$)/
const FAST_FILENAME = /(?:^|[\r\n])Filename:[ \t]*([A-Za-z0-9._-]+)[ \t]*(?=[\r\n]|$)/
const ANOTHER_ID = /(?:^|[\r\n])(?:RuleID|PolicyID|QueryName):/

/** The id (RuleID, PolicyID, a query's QueryName) and Filename of an analysis file; a regex for the usual plain form, YAML otherwise. */
export function quickIdentity(text: string): Identity {
  const m = FAST_ID.exec(text)
  if (m && !ANOTHER_ID.test(text.slice(m.index + m[0].length))) {
    return { id: m[1], filename: FAST_FILENAME.exec(text)?.[1] }
  }
  try {
    // The bounded reader: a hostile file in the history must not take the process down.
    const parsed = parseYaml(text)
    if (parsed.errors.length > 0) return {}
    const v = parsed.value as Record<string, unknown> | null
    if (!v || typeof v !== 'object') return {}
    const id = v.RuleID ?? v.PolicyID ?? v.QueryName
    return {
      id: typeof id === 'string' || typeof id === 'number' ? String(id) : undefined,
      filename: typeof v.Filename === 'string' ? v.Filename : undefined,
    }
  } catch {
    return {}
  }
}

/**
 * The actor of a commit: its trailers when the service made it (`byService`), else its author's
 * email: whoever can push can write any trailer, so a plain-git commit's trailers prove nothing.
 */
export function commitActor(c: Pick<CommitInfo, 'message' | 'author'>, byService: boolean): Actor {
  const author: Actor = { id: c.author.email || c.author.name, type: 'user' }
  if (!byService) return author
  // Trailers are the last paragraph only (a change reason in the body cannot forge them), lines end
  // at `\n` only (an id holding U+2028 cannot start a line), and each must be there exactly once.
  const trailers = parseTrailers(c.message)
  const id = singleTrailer(trailers, 'Actor-Id')
  const type = singleTrailer(trailers, 'Actor-Type')
  if (id && (type === 'user' || type === 'api-token' || type === 'system')) return { id, type }
  return author
}

/**
 * The cache is a start-up shortcut only (a lost save costs re-walking the newest commits), and at
 * 20k rules serializing it takes ~50 ms of CPU: saved at most this often, and at shutdown.
 */
const PERSIST_EVERY_MS = 30_000

/** A YAML path left the id and another one joined it: the file moved (or was renamed). */
function isMove(before: Set<string> | undefined, after: Set<string> | undefined): boolean {
  if (!before || !after) return false
  return [...before].some((p) => !after.has(p)) && [...after].some((p) => !before.has(p))
}

export class HistoryTracker {
  private state: State = emptyState()
  /** id → number of YAML files claiming it; derived from pathToId, never persisted. */
  private counts = new Map<string, number>()
  /** id → the .py paths it owns; derived from pyOwner (a scan of pyOwner per change cost O(python files)). */
  private pyByOwner = new Map<string, Set<string>>()
  private persistTimer: NodeJS.Timeout | undefined
  private persisting: Promise<void> = Promise.resolve()
  private dirty = false

  /** `isServiceCommit`: whether the service made a commit (its trailers name the actor then). */
  constructor(
    private readonly cacheFile: string | null,
    private readonly isServiceCommit: (c: Pick<CommitInfo, 'oid' | 'signature'>) => boolean,
  ) {}

  get head(): string | null {
    return this.state.head
  }

  get(id: string): RuleHistory | undefined {
    return this.state.meta.get(id)
  }

  /** The id → commits index (every life of the id, moves followed). */
  get log(): RuleLog {
    return this.state.log
  }

  async loadCache(): Promise<void> {
    if (!this.cacheFile) return
    await removeTempFiles(this.cacheFile)
    try {
      const s = parseState(await fsp.readFile(this.cacheFile, 'utf8'))
      if (s) {
        this.state = s
        this.counts = new Map()
        for (const id of s.pathToId.values()) this.counts.set(id, (this.counts.get(id) ?? 0) + 1)
        this.pyByOwner = new Map()
        for (const [py, id] of s.pyOwner) this.ownedBy(id).add(py)
      }
    } catch {
      /* no cache or a torn one: rebuilt from history */
    }
  }

  reset(): void {
    this.state = emptyState()
    this.counts = new Map()
    this.pyByOwner = new Map()
  }

  private ownedBy(id: string): Set<string> {
    let set = this.pyByOwner.get(id)
    if (!set) this.pyByOwner.set(id, (set = new Set()))
    return set
  }

  private setPyOwner(py: string, id: string | undefined): void {
    const old = this.state.pyOwner.get(py)
    if (old !== undefined) {
      const set = this.pyByOwner.get(old)
      set?.delete(py)
      if (set?.size === 0) this.pyByOwner.delete(old)
      this.state.pyOwner.delete(py)
    }
    if (id !== undefined) {
      this.state.pyOwner.set(py, id)
      this.ownedBy(id).add(py)
    }
  }

  private setPath(p: string, id: string | undefined): void {
    const old = this.state.pathToId.get(p)
    if (old !== undefined) {
      const n = (this.counts.get(old) ?? 1) - 1
      if (n <= 0) this.counts.delete(old)
      else this.counts.set(old, n)
      this.state.pathToId.delete(p)
    }
    if (id !== undefined) {
      this.state.pathToId.set(p, id)
      this.counts.set(id, (this.counts.get(id) ?? 0) + 1)
    }
  }

  /**
   * Applies one commit (its first-parent changes). Commits must come in order. `merged`: the commits
   * a merge commit brought in (merged-commits.ts), whose authors a merged pull request is credited to.
   */
  apply(
    commit: Pick<CommitInfo, 'oid' | 'message' | 'author' | 'signature'> & { parents?: readonly string[] },
    unordered: readonly CommitFileChange[],
    merged?: ReadonlyArray<Pick<CommitInfo, 'author' | 'parents'>>,
  ): void {
    const s = this.state
    // In path order, so the outcome never depends on who listed the changes (tree walk, git log).
    const changes = [...unordered].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    const byService = this.isServiceCommit(commit)
    const credit = byService ? null : mergeCredit(commit, merged)
    const stamp: Stamp = {
      commit: commit.oid,
      at: new Date(commit.author.timestamp * 1000).toISOString(),
      actor: credit?.actor ?? commitActor(commit, byService),
    }
    const count = (id: string) => this.counts.get(id) ?? 0
    const affected = new Set<string>()
    const identities = new Map<CommitFileChange, Identity>()
    // The id's changed files, and its YAML paths among them before and after (a move changes them).
    const touched = new Map<string, Set<string>>()
    const yamlBefore = new Map<string, Set<string>>()
    const yamlAfter = new Map<string, Set<string>>()
    const note = (m: Map<string, Set<string>>, id: string, p: string) => {
      let set = m.get(id)
      if (!set) m.set(id, (set = new Set()))
      set.add(p)
    }
    for (const ch of changes) {
      const owner = s.pyOwner.get(ch.path)
      if (owner) {
        affected.add(owner)
        note(touched, owner, ch.path)
      }
      const old = s.pathToId.get(ch.path)
      if (old) {
        affected.add(old)
        note(touched, old, ch.path)
        note(yamlBefore, old, ch.path)
      }
      if (isYamlPath(ch.path) && (ch.text !== null || ch.identity)) {
        const identity = ch.identity ?? quickIdentity(ch.text!)
        identities.set(ch, identity)
        if (identity.id) {
          affected.add(identity.id)
          note(touched, identity.id, ch.path)
          note(yamlAfter, identity.id, ch.path)
        }
      }
    }
    const existedBefore = new Map([...affected].map((id) => [id, s.meta.has(id) && count(id) > 0]))
    // What the changed files said before goes first, then what they say now: the result does not
    // depend on the order of the changes (a rule renamed within its folder keeps its .py).
    for (const ch of changes) {
      if (!isYamlPath(ch.path)) continue
      const prevId = s.pathToId.get(ch.path)
      if (prevId !== undefined) {
        for (const py of [...(this.pyByOwner.get(prevId) ?? [])])
          if (path.posix.dirname(py) === path.posix.dirname(ch.path)) this.setPyOwner(py, undefined)
      }
      this.setPath(ch.path, undefined)
    }
    for (const ch of changes) {
      if (!isYamlPath(ch.path)) continue
      const identity = identities.get(ch)
      if (!identity) continue
      const { id, filename } = identity
      if (!id) continue
      this.setPath(ch.path, id)
      if (filename) {
        const dir = path.posix.dirname(ch.path)
        this.setPyOwner(dir === '.' ? filename : `${dir}/${filename}`, id)
      }
    }
    for (const ch of changes) {
      const owner = s.pyOwner.get(ch.path)
      if (owner && affected.has(owner)) note(touched, owner, ch.path)
    }
    const seq = s.log.next()
    const meta = () => ({
      parent: commit.parents ? (commit.parents[0] ?? null) : s.head,
      time: stamp.at,
      actor: stamp.actor,
      authorName: credit?.authorName ?? commit.author.name,
      reason: commitReason(commit.message),
      ...(credit ? { mergedBy: credit.mergedBy, authors: credit.authors } : {}),
    })
    for (const id of affected) {
      const before = existedBefore.get(id) === true
      const after = count(id) > 0
      if (!after) s.meta.delete(id)
      else if (!before) s.meta.set(id, { created: stamp, modified: stamp })
      else s.meta.set(id, { created: s.meta.get(id)!.created, modified: stamp })
      if (!before && !after) continue
      const change: ChangeKind = !before
        ? 'created'
        : !after
          ? 'deleted'
          : isMove(yamlBefore.get(id), yamlAfter.get(id))
            ? 'moved'
            : 'updated'
      const paths = [...(touched.get(id) ?? [])].sort()
      s.log.record(id, { commit: commit.oid, seq, change, paths }, meta)
    }
    s.head = commit.oid
    this.markDirty()
  }

  private markDirty(): void {
    this.dirty = true
    if (!this.cacheFile || this.persistTimer) return
    this.persistTimer = setTimeout(() => {
      this.persistTimer = undefined
      this.persisting = this.persist().catch(() => {
        // A failed save only costs a re-walk of the newest commits at the next start.
        this.dirty = true
      })
    }, PERSIST_EVERY_MS)
    this.persistTimer.unref()
  }

  /** Writes the state durably (durable-file: temp, fsync, rename); a lost cache only costs a re-walk. */
  async persist(): Promise<void> {
    if (!this.cacheFile || !this.dirty) return
    this.dirty = false
    await fsp.mkdir(path.dirname(this.cacheFile), { recursive: true })
    await writeFileDurable(this.cacheFile, serializeState(this.state))
  }

  async close(): Promise<void> {
    if (this.persistTimer) clearTimeout(this.persistTimer)
    this.persistTimer = undefined
    await this.persisting
    if (this.cacheFile && this.dirty) {
      fs.mkdirSync(path.dirname(this.cacheFile), { recursive: true })
      writeFileDurableSync(this.cacheFile, serializeState(this.state))
      this.dirty = false
    }
  }
}
