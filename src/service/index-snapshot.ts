// The persisted index: the last applied revision's index written to `<data>/cache/index.ndjson`
// so a restart reads one file instead of re-reading and re-checking every rule. It is a cache,
// never the truth: it is keyed by the revision it describes and by a fingerprint of the code that
// built it (any change of the service's code, or of which engines are present, discards it), and
// a missing, torn or foreign file only costs a full rebuild. After loading, the follower brings the
// index to the branch tip incrementally (tree diff), as for any other revision change.
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { writeFileDurable } from '../durable-file.js'
import { fileDataToView } from '../rules/mapping.js'
import { RULE_KINDS } from '../rules/kinds/index.js'
import type { RuleFile, RuleKind, RuleProblem, SupportFile } from '../rules/model.js'
import { RuleIndex, type FileRecord, type IndexedRule } from '../rules/rule-index.js'
import { removeTempFiles } from './cache-files.js'
import { searchKeys } from './file-records.js'

const FORMAT = 'rulekeeper-index/1'
/** Records per write: the event loop is given back between chunks so requests keep flowing. */
const CHUNK = 500

interface Header {
  format: string
  fingerprint: string
  revision: string
  files: number
}

/** A rule as stored: the file form and what was found checking it; the view is derived again. */
interface StoredRule {
  kind: RuleKind
  id: string
  path: string
  pythonPath?: string
  data: Record<string, unknown>
  pythonSource?: string
  warnings: RuleProblem[]
  stale?: boolean
}

interface StoredFile extends Omit<FileRecord, 'rule'> {
  rule?: StoredRule
}

/** How the maps that are not per file are rebuilt: served rules and supports by the path holding them. */
interface Tail {
  /** id → the path whose rule it serves, or the stale rule itself (its file is invalid now). */
  rules: Array<[string, string | StoredRule]>
  supports: Array<[string, string]>
  /** Ids claimed by more than one file, in the order the index keeps them (oldest first). */
  holders: Array<[string, string[]]>
  sorted: Record<RuleKind, string[]>
}

/**
 * Numbers JSON cannot hold (YAML's `.inf`, `-.inf`, `.nan`, and `-0`) are written as a one-key
 * object and read back as numbers. Data that itself has that key cannot be persisted exactly:
 * the save fails (and the next start rebuilds) rather than the load inventing a number.
 */
const NUMBER_TAG = '__rulekeeper_number__'

function replacer(this: unknown, _key: string, v: unknown): unknown {
  if (typeof v === 'number') {
    if (Number.isFinite(v) && !Object.is(v, -0)) return v
    return { [NUMBER_TAG]: Object.is(v, -0) ? '-0' : String(v) }
  }
  if (v && typeof v === 'object' && !Array.isArray(v) && Object.hasOwn(v, NUMBER_TAG))
    throw new Error(`a rule file uses the key ${NUMBER_TAG}`)
  return v
}

function reviver(_key: string, v: unknown): unknown {
  if (v && typeof v === 'object' && !Array.isArray(v) && Object.hasOwn(v, NUMBER_TAG))
    return Number((v as Record<string, string>)[NUMBER_TAG])
  return v
}

/** The reviver costs a call per value: only lines holding a tagged number pay it. */
const parseLine = (line: string): unknown => (line.includes(NUMBER_TAG) ? JSON.parse(line, reviver) : JSON.parse(line))

let codeFingerprint: string | undefined

/**
 * A hash of the service's own code (every module file) and of the exact dependency versions (the
 * lock file: a new `yaml`, `js-yaml` or ajv may read or check files differently): a new build or
 * an upgrade never reads an old snapshot.
 */
function fingerprintOfCode(): string {
  if (codeFingerprint) return codeFingerprint
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
  const hash = createHash('sha256').update(FORMAT)
  for (const f of ['package-lock.json', 'package.json']) {
    const p = path.join(root, '..', f)
    if (fs.existsSync(p)) hash.update(f).update(fs.readFileSync(p))
  }
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else if (/\.(?:[cm]?js|ts|py)$/.test(e.name)) hash.update(p.slice(root.length)).update(fs.readFileSync(p))
    }
  }
  walk(root)
  return (codeFingerprint = hash.digest('hex'))
}

function snapshotFingerprint(engineKinds: readonly string[]): string {
  return createHash('sha256')
    .update(fingerprintOfCode())
    .update([...engineKinds].sort().join(','))
    .digest('hex')
    .slice(0, 32)
}

function storeRule(r: IndexedRule): StoredRule {
  return {
    kind: r.kind,
    id: r.id,
    path: r.path,
    pythonPath: r.pythonPath,
    data: r.file.data as Record<string, unknown>,
    pythonSource: r.file.pythonSource,
    warnings: r.warnings,
    stale: r.stale,
  }
}

function restoreRule(s: StoredRule): IndexedRule {
  const file: RuleFile = {
    kind: s.kind,
    id: s.id,
    path: s.path,
    data: s.data,
    pythonSource: s.pythonSource,
    pythonPath: s.pythonPath,
  }
  const view = fileDataToView(s.kind, s.data, s.pythonSource)
  const rule: IndexedRule = {
    kind: s.kind,
    id: s.id,
    path: s.path,
    pythonPath: s.pythonPath,
    file,
    view,
    search: searchKeys(s.id, view),
    warnings: s.warnings,
  }
  if (s.stale) rule.stale = true
  return rule
}

/**
 * Writes the index of `index.revision` (durable-file: temp, fsync, rename, fsync the folder; a crash
 * leaves the previous snapshot or none). Everything is captured synchronously first (the maps change
 * in place at the next publish), then serialized in chunks.
 */
async function saveSnapshot(file: string, index: RuleIndex, fingerprint: string): Promise<void> {
  if (!index.revision) return
  const files = [...index.files.values()]
  const tail: Tail = {
    rules: [],
    supports: [],
    holders: [],
    sorted: Object.fromEntries(RULE_KINDS.map((k) => [k, [...index.sorted[k]]])) as Record<RuleKind, string[]>,
  }
  for (const [id, rule] of index.rules)
    tail.rules.push([id, index.files.get(rule.path)?.rule === rule ? rule.path : storeRule(rule)])
  for (const [id, support] of index.supports) tail.supports.push([id, support.path])
  for (const [id, paths] of index.holders) if (paths.length > 1) tail.holders.push([id, [...paths]])
  const header: Header = { format: FORMAT, fingerprint, revision: index.revision, files: files.length }

  await fsp.mkdir(path.dirname(file), { recursive: true })
  await writeFileDurable(file, async (fh) => {
    await fh.write(`${JSON.stringify(header)}\n`)
    for (let i = 0; i < files.length; i += CHUNK) {
      const lines = files
        .slice(i, i + CHUNK)
        .map((f) => JSON.stringify(f.rule ? { ...f, rule: storeRule(f.rule) } : f, replacer))
      await fh.write(`${lines.join('\n')}\n`)
    }
    await fh.write(`${JSON.stringify(tail, replacer)}\n`)
  })
}

/** The index stored in `file`, or null when there is none usable (absent, torn, other code or format). */
async function loadSnapshot(file: string, fingerprint: string): Promise<RuleIndex | null> {
  let text: string
  try {
    text = await fsp.readFile(file, 'utf8')
  } catch {
    return null
  }
  try {
    const lines = text.split('\n')
    const header = JSON.parse(lines[0]!) as Header
    if (header.format !== FORMAT || header.fingerprint !== fingerprint || typeof header.revision !== 'string')
      return null
    // Header, one line per file, the tail, and the final newline: anything else is a torn file.
    if (lines.length !== header.files + 3 || lines[lines.length - 1] !== '') return null
    const files = new Map<string, FileRecord>()
    for (let i = 1; i <= header.files; i++) {
      const s = parseLine(lines[i]!) as StoredFile
      files.set(s.path, s.rule ? { ...s, rule: restoreRule(s.rule) } : (s as FileRecord))
    }
    const tail = parseLine(lines[header.files + 1]!) as Tail
    const rules = new Map<string, IndexedRule>()
    for (const [id, ref] of tail.rules) {
      const rule = typeof ref === 'string' ? files.get(ref)?.rule : restoreRule(ref)
      if (!rule) return null
      rules.set(id, rule)
    }
    const supports = new Map<string, SupportFile>()
    for (const [id, p] of tail.supports) {
      const support = files.get(p)?.support
      if (!support) return null
      supports.set(id, support)
    }
    const holders = new Map<string, readonly string[]>()
    for (const f of files.values()) if (f.id !== undefined) holders.set(f.id, [f.path])
    for (const [id, paths] of tail.holders) holders.set(id, paths)
    return new RuleIndex(header.revision, files, rules, supports, holders, tail.sorted)
  } catch {
    return null
  }
}

/**
 * When the snapshot is written: soon after a full build, at most every 5 minutes while the index
 * keeps changing (writes, reconciles), and at shutdown. A start after a crash applies what changed
 * since the saved revision incrementally, so saving more often would buy little for the CPU it
 * costs (the whole index is serialized each time). One write at a time; a failed write is logged
 * and only costs a longer next start.
 */
const SAVE_EVERY_MS = 5 * 60_000

export class IndexPersistence {
  private readonly fingerprint: string
  private savedRevision: string | null = null
  private latest: RuleIndex | null = null
  private timer: NodeJS.Timeout | undefined
  private saving: Promise<void> = Promise.resolve()

  constructor(
    readonly file: string,
    engineKinds: readonly string[],
    private readonly logger: { info(o: object, m: string): void; warn(o: object, m: string): void },
  ) {
    this.fingerprint = snapshotFingerprint(engineKinds)
  }

  /** The persisted index, if it is usable and its revision is in the repository. */
  async load(repo: { hasCommit(oid: string): Promise<boolean> }): Promise<RuleIndex | null> {
    const started = Date.now()
    await removeTempFiles(this.file)
    const index = await loadSnapshot(this.file, this.fingerprint)
    if (!index || !(await repo.hasCommit(index.revision!))) return null
    this.savedRevision = index.revision
    this.logger.info(
      { revision: index.revision, rules: index.rules.size, ms: Date.now() - started },
      'loaded the persisted index',
    )
    return index
  }

  /** The catalog published a new index. */
  changed(index: RuleIndex): void {
    this.latest = index
    if (this.timer || index.revision === this.savedRevision) return
    this.timer = setTimeout(() => this.saveNow(), SAVE_EVERY_MS)
    this.timer.unref()
  }

  saveSoon(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = setTimeout(() => this.saveNow(), 0)
    this.timer.unref()
  }

  private saveNow(): Promise<void> {
    this.timer = undefined
    this.saving = this.saving.then(async () => {
      // The newest index, read when the save starts: published indexes share their maps (a publish
      // folds its changes into them), so only the current one matches its revision.
      const index = this.latest
      if (!index?.revision || index.revision === this.savedRevision) return
      const started = Date.now()
      try {
        await saveSnapshot(this.file, index, this.fingerprint)
        this.savedRevision = index.revision
        this.logger.info(
          { revision: index.revision, rules: index.rules.size, ms: Date.now() - started },
          'persisted the index',
        )
      } catch (err) {
        this.logger.warn({ msg: (err as Error).message }, 'could not persist the index; the next start rebuilds it')
      }
    })
    return this.saving
  }

  async close(index: RuleIndex): Promise<void> {
    if (this.timer) clearTimeout(this.timer)
    this.latest = index
    await this.saveNow()
  }
}
