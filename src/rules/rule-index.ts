// The in-memory index of one revision: every analysis file by path, the served rules by id,
// id-ordered lists per kind for pagination, and the invalid files. A change is made on a draft (a
// layer over the maps) and published in one synchronous step as a new index object; publishing folds
// the layer into the same maps, so an index is a snapshot only until the next publish: read the
// catalog's current index and do not hold one across an await. Readers never wait.
import type { RuleFile, RuleKind, RuleProblem, SupportFile } from './model.js'
import { caseCollisions } from './case-collisions.js'
import { foldId } from './rule-id.js'
import { RULE_KINDS } from './kinds/index.js'

/** One YAML analysis file as last read from the repository. */
export interface FileRecord {
  path: string
  analysisType?: string
  kind?: RuleKind
  id?: string
  /** Present when the file is a valid rule. */
  rule?: IndexedRule
  support?: SupportFile
  /** Errors that keep the file from being served. */
  errors: RuleProblem[]
  /** Why a file read without errors is not served (rules/file-accounting.ts): its type, or not an analysis file. */
  unsupported?: string
  /** Where the file's id is written (for duplicate-id reports). */
  idAt?: { line: number; column: number }
  /** The index-time check of the file's Python module (service/python-check.ts), once it ran. */
  python?: PythonCheck
  /** Bytes of the file and of the `.py` it names, as read (a file too large to read: its size). */
  bytes?: number
  /** A tree entry whose name is not a valid path segment: the folder holding it (never read or served). */
  badNameIn?: string
}

/** What the index-time check of a file's Python module found, beyond its errors. */
export interface PythonCheck {
  /** The module's repository path (a fix of it alone re-reads this file). */
  path: string
  /** The top-level names its source imports (a change of a global helper of that id re-checks it). */
  imports: string[]
  /** It imports a module the interpreter lacks: served, but its code cannot run here. */
  notRun?: RuleProblem
  /** It could not be checked (no sandbox, or the check was stopped): checked again at the next reindex. */
  unchecked?: string
}

export interface IndexedRule {
  kind: RuleKind
  id: string
  path: string
  pythonPath?: string
  file: RuleFile
  /** The API view without history metadata. */
  view: Record<string, unknown>
  /** Lower-cased display name (else id), id and tags, computed once for the list filters. */
  search: { name: string; id: string; tags: string[] }
  warnings: RuleProblem[]
  /** Served from its last valid version because the file in the current revision is invalid. */
  stale?: boolean
}

export interface InvalidFile {
  path: string
  ruleId?: string
  errors: RuleProblem[]
}

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b))

function lowerBound(list: readonly string[], id: string): number {
  let lo = 0
  let hi = list.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (byteOrder(list[mid]!, id) < 0) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** fold(id) → the distinct ids held by at least one file, from the holders map. */
function foldHolders(holders: ReadonlyMap<string, readonly string[]>): Map<string, readonly string[]> {
  const out = new Map<string, readonly string[]>()
  for (const id of holders.keys()) {
    const k = foldId(id)
    out.set(k, [...(out.get(k) ?? []), id])
  }
  return out
}

export class RuleIndex {
  /** foldId(id) → the ids held by some file: ids must be unique ignoring case. */
  readonly folded: ReadonlyMap<string, readonly string[]>

  constructor(
    readonly revision: string | null,
    readonly files: ReadonlyMap<string, FileRecord>,
    readonly rules: ReadonlyMap<string, IndexedRule>,
    readonly supports: ReadonlyMap<string, SupportFile>,
    /** id → paths of every analysis file claiming it, oldest first. */
    readonly holders: ReadonlyMap<string, readonly string[]>,
    readonly sorted: Readonly<Record<RuleKind, readonly string[]>>,
    folded?: ReadonlyMap<string, readonly string[]>,
  ) {
    this.folded = folded ?? foldHolders(holders)
  }

  static empty(): RuleIndex {
    const sorted = Object.fromEntries(RULE_KINDS.map((k) => [k, []])) as unknown as Record<RuleKind, string[]>
    return new RuleIndex(null, new Map(), new Map(), new Map(), new Map(), sorted)
  }

  /**
   * An index of the same content with maps of its own: a draft of it folds its changes into the
   * copy, never into this one (a draft's publish writes into its base's maps). For readers that
   * build another revision's index from this one without serving it (a plan).
   */
  copy(): RuleIndex {
    return new RuleIndex(
      this.revision,
      new Map(this.files),
      new Map(this.rules),
      new Map(this.supports),
      new Map(this.holders),
      { ...this.sorted },
      new Map(this.folded),
    )
  }

  get(kind: RuleKind, id: string): IndexedRule | undefined {
    const r = this.rules.get(id)
    return r && r.kind === kind ? r : undefined
  }

  /** The ids of a kind strictly after `after` (byte order), in order. */
  *idsAfter(kind: RuleKind, after: string | null): Generator<string> {
    const list = this.sorted[kind]
    let i = after === null ? 0 : lowerBound(list, after)
    if (after !== null && list[i] === after) i++
    for (; i < list.length; i++) yield list[i]!
  }

  /** Files that failed to parse or validate, and every file of an id claimed more than once. */
  invalidFiles(): InvalidFile[] {
    const out = new Map<string, InvalidFile>()
    for (const f of this.files.values())
      if (f.errors.length > 0) out.set(f.path, { path: f.path, ruleId: f.id, errors: f.errors })
    for (const [id, paths] of this.holders) {
      if (paths.length < 2) continue
      paths.forEach((p, i) => {
        const f = this.files.get(p)!
        const others = paths.filter((x) => x !== p).join(', ')
        const message = `duplicate id ${id}: also defined in ${others}; ${i === 0 ? 'this older file keeps serving' : `${paths[0]} keeps serving`}`
        const entry = out.get(p) ?? { path: p, ruleId: id, errors: [] }
        entry.errors = [...entry.errors, { path: ['RuleID'], message, ...f.idAt }]
        out.set(p, entry)
      })
    }
    // Ids or paths differing only by case: one file would overwrite the other in a clone on a
    // case-insensitive disk. Reported on every file involved; each keeps serving its own id.
    for (const c of caseCollisions(this.files.values(), this.folded, (id) => this.holders.get(id) ?? [])) {
      const f = this.files.get(c.path)!
      const entry = out.get(c.path) ?? { path: c.path, ruleId: f.id, errors: [] }
      entry.errors = [
        ...entry.errors,
        { path: c.onId ? ['RuleID'] : [], message: c.message, ...(c.onId ? f.idAt : {}) },
      ]
      out.set(c.path, entry)
    }
    return [...out.values()].sort((a, b) => byteOrder(a.path, b.path))
  }

  draft(): IndexDraft {
    return new IndexDraft(this)
  }
}

/**
 * A map seen through a layer of changes. Copying the index's maps for every write cost O(rules)
 * (14 ms a write at 20k rules); the layer costs O(changes). publish() folds the layer into the
 * base map in one synchronous step — readers run synchronously, so none sees a half state — and
 * all changes to the index are serialized (the catalog's `exclusive`), so one draft is published at a time.
 */
class OverlayMap<K, V> {
  private readonly changes = new Map<K, V | typeof DELETED>()

  constructor(private readonly base: Map<K, V>) {}

  get(k: K): V | undefined {
    const v = this.changes.get(k)
    if (v === DELETED) return undefined
    return v !== undefined ? v : this.base.get(k)
  }

  has(k: K): boolean {
    return this.get(k) !== undefined
  }

  set(k: K, v: V): void {
    this.changes.set(k, v)
  }

  delete(k: K): void {
    this.changes.set(k, DELETED)
  }

  *values(): IterableIterator<V> {
    for (const [k, v] of this.base) if (!this.changes.has(k)) yield v
    for (const v of this.changes.values()) if (v !== DELETED) yield v as V
  }

  /** Applies the changes to the base map and returns it. The overlay must not be used afterwards. */
  fold(): Map<K, V> {
    for (const [k, v] of this.changes) {
      if (v === DELETED) this.base.delete(k)
      else this.base.set(k, v as V)
    }
    this.changes.clear()
    return this.base
  }
}

const DELETED: unique symbol = Symbol('deleted')

export class IndexDraft {
  private files: OverlayMap<string, FileRecord>
  private rules: OverlayMap<string, IndexedRule>
  private supports: OverlayMap<string, SupportFile>
  private holders: OverlayMap<string, readonly string[]>
  private folded: OverlayMap<string, readonly string[]>
  private touchedIds = new Set<string>()

  constructor(private readonly base: RuleIndex) {
    this.files = new OverlayMap(base.files as Map<string, FileRecord>)
    this.rules = new OverlayMap(base.rules as Map<string, IndexedRule>)
    this.supports = new OverlayMap(base.supports as Map<string, SupportFile>)
    this.holders = new OverlayMap(base.holders as Map<string, readonly string[]>)
    this.folded = new OverlayMap(base.folded as Map<string, readonly string[]>)
  }

  getFile(path: string): FileRecord | undefined {
    return this.files.get(path)
  }

  allFiles(): Iterable<FileRecord> {
    return this.files.values()
  }

  ruleById(id: string): IndexedRule | undefined {
    // A file changed in this draft (an earlier write of the same batch) decides what the id serves now.
    if (this.touchedIds.has(id)) this.resolve(id)
    return this.rules.get(id)
  }

  supportById(id: string): SupportFile | undefined {
    // As ruleById: a file changed in this draft decides what the id serves now.
    if (this.touchedIds.has(id)) this.resolve(id)
    return this.supports.get(id)
  }

  /** Every support file served by the draft (globals, data models, queries…), changes included. */
  supportFiles(): Iterable<SupportFile> {
    for (const id of this.touchedIds) this.resolve(id)
    return this.supports.values()
  }

  holdersOf(id: string): readonly string[] {
    return this.holders.get(id) ?? []
  }

  /** Another id held by some file that differs from `id` only by case, if any. */
  caseTwinOf(id: string): string | undefined {
    return (this.folded.get(foldId(id)) ?? []).find((other) => other !== id)
  }

  putFile(rec: FileRecord): void {
    const old = this.files.get(rec.path)
    if (old?.id !== undefined && old.id !== rec.id) this.dropHolder(old.id, rec.path)
    this.files.set(rec.path, rec)
    if (rec.id !== undefined) {
      const h = this.holders.get(rec.id) ?? []
      if (h.length === 0) this.foldIn(rec.id)
      if (!h.includes(rec.path)) this.holders.set(rec.id, [...h, rec.path])
      this.touchedIds.add(rec.id)
    }
    if (old?.id !== undefined) this.touchedIds.add(old.id)
  }

  removeFile(path: string): void {
    const old = this.files.get(path)
    if (!old) return
    this.files.delete(path)
    if (old.id !== undefined) {
      this.dropHolder(old.id, path)
      this.touchedIds.add(old.id)
    }
  }

  private dropHolder(id: string, path: string): void {
    const h = (this.holders.get(id) ?? []).filter((p) => p !== path)
    if (h.length === 0) {
      this.holders.delete(id)
      this.foldOut(id)
    } else this.holders.set(id, h)
  }

  private foldIn(id: string): void {
    const k = foldId(id)
    const ids = this.folded.get(k) ?? []
    if (!ids.includes(id)) this.folded.set(k, [...ids, id])
  }

  private foldOut(id: string): void {
    const k = foldId(id)
    const ids = (this.folded.get(k) ?? []).filter((x) => x !== id)
    if (ids.length === 0) this.folded.delete(k)
    else this.folded.set(k, ids)
  }

  /** Re-decides what each touched id serves: the oldest valid holder, else the last good version. */
  private resolve(id: string): void {
    const paths = this.holders.get(id) ?? []
    // The last good version is what the published index served: a version read into this draft
    // and then found invalid (its Python did not import) is never it.
    const prev = this.base.rules.get(id) ?? this.rules.get(id)
    this.supports.delete(id)
    let served: IndexedRule | undefined
    for (const p of paths) {
      const f = this.files.get(p)!
      // An invalid file (a data model with problems) keeps its support for re-reads, never serves it;
      // a valid query is both a rule (served through the API) and a support file (named by rules).
      if (f.support && f.errors.length === 0 && served === undefined && !this.supports.has(id))
        this.supports.set(id, f.support)
      if (f.rule && !served) served = f.rule
    }
    // Duplicates (reported by invalidFiles): the oldest holder serves; the others never do.
    if (paths.length > 1) served = this.files.get(paths[0]!)!.rule
    if (served) this.rules.set(id, served)
    else if (prev && paths.some((p) => this.files.get(p)?.kind === prev.kind && this.files.get(p)?.errors.length)) {
      // The file is still there but invalid: keep serving its last valid version, marked stale.
      this.rules.set(id, { ...prev, stale: true })
    } else this.rules.delete(id)
  }

  /** How many rules of the base index this draft removes (for the mass-deletion guard). */
  removedRuleCount(): number {
    let n = 0
    for (const id of this.touchedIds) {
      this.resolve(id)
      if (this.base.rules.has(id) && !this.rules.has(id)) n++
    }
    return n
  }

  publish(revision: string | null): RuleIndex {
    const sorted = { ...this.base.sorted } as Record<RuleKind, readonly string[]>
    const lists: Partial<Record<RuleKind, string[]>> = {}
    const list = (k: RuleKind) => (lists[k] ??= [...sorted[k]])
    for (const id of this.touchedIds) {
      const before = this.base.rules.get(id)
      this.resolve(id)
      const after = this.rules.get(id)
      if (before && before.kind !== after?.kind) {
        const l = list(before.kind)
        const i = lowerBound(l, id)
        if (l[i] === id) l.splice(i, 1)
      }
      if (after && before?.kind !== after.kind) {
        const l = list(after.kind)
        const i = lowerBound(l, id)
        if (l[i] !== id) l.splice(i, 0, id)
      }
    }
    for (const [k, l] of Object.entries(lists)) sorted[k as RuleKind] = l
    this.touchedIds.clear()
    return new RuleIndex(
      revision,
      this.files.fold(),
      this.rules.fold(),
      this.supports.fold(),
      this.holders.fold(),
      sorted,
      this.folded.fold(),
    )
  }
}
