// Git's object database for the bare rules repository. Writes loose objects directly (zlib +
// sha1, write-to-temp, fsync, rename) because isomorphic-git's writers deflate in JavaScript and
// re-read config per call (see spec/quality.md); reads loose objects the same way and falls back to
// isomorphic-git for packed objects (clones, `git gc`). Trees and commits are parsed here.
import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { deflateSync, inflateSync } from 'node:zlib'
import git from 'isomorphic-git'
import { gitBinaryAvailable } from './git-binary.js'
import { CatFileReader } from './git-cat-file.js'

export type ObjectType = 'blob' | 'tree' | 'commit' | 'tag'

export interface TreeEntry {
  mode: string
  name: string
  oid: string
}

export interface Person {
  name: string
  email: string
  /** Seconds since the epoch. */
  timestamp: number
  /** Minutes east of UTC, as git stores it (+0200 → 120). */
  tzOffsetMinutes: number
}

export interface CommitInfo {
  oid: string
  tree: string
  parents: string[]
  author: Person
  committer: Person
  message: string
}

export const TREE_MODE = '40000'
export const FILE_MODE = '100644'

export function hashObject(type: ObjectType, content: Buffer): { oid: string; raw: Buffer } {
  const raw = Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content])
  return { oid: createHash('sha1').update(raw).digest('hex'), raw }
}

/** A set of new objects written together and made durable with one round of fsyncs. */
export class ObjectBatch {
  readonly objects = new Map<string, Buffer>()
  add(type: ObjectType, content: Buffer): string {
    const { oid, raw } = hashObject(type, content)
    if (!this.objects.has(oid)) this.objects.set(oid, raw)
    return oid
  }
}

export class ObjectDb {
  private readonly treeCache = new Map<string, TreeEntry[]>()
  private readonly treeCacheMax = 50_000
  /** Objects known to exist on disk (written or read by us); saves a stat per write. */
  private readonly known = new Set<string>()
  /** Fan-out folders (objects/xx) known to exist. */
  private readonly dirs = new Set<string>()

  /** isomorphic-git's parsed pack indexes, kept between reads (without it every read re-parses them). */
  private readonly packCache: object = {}

  private catFileReader: CatFileReader | null = null

  /** `useGitBinary`: read packed objects through `git cat-file` when git is installed (default). */
  constructor(
    readonly gitdir: string,
    private readonly useGitBinary = true,
  ) {}

  /** git cat-file processes that failed; after a few, packed reads stay with isomorphic-git. */
  private catFileFailures = 0

  private catFile(): CatFileReader | null {
    if (!this.useGitBinary || this.catFileFailures >= 3 || !gitBinaryAvailable()) return null
    if (this.catFileReader?.broken) {
      this.catFileReader = null
      this.catFileFailures++
      if (this.catFileFailures >= 3) return null
    }
    this.catFileReader ??= new CatFileReader(this.gitdir)
    return this.catFileReader
  }

  /** Stops the `git cat-file` process, if one was started (a later read starts another). */
  close(): void {
    this.catFileReader?.close()
    this.catFileReader = null
  }

  /** Tree reads in flight: concurrent lookups of one tree share one read. */
  private readonly treeReads = new Map<string, Promise<TreeEntry[]>>()

  private loosePath(oid: string): string {
    return path.join(this.gitdir, 'objects', oid.slice(0, 2), oid.slice(2))
  }

  /** Writes every object of the batch durably: temp file, fsync, rename, then fsync the folders. */
  async writeBatch(batch: ObjectBatch): Promise<void> {
    const dirs = new Set<string>()
    await Promise.all(
      [...batch.objects].map(async ([oid, raw]) => {
        if (this.known.has(oid)) return
        const final = this.loosePath(oid)
        if (fs.existsSync(final)) {
          this.known.add(oid)
          return
        }
        const dir = path.dirname(final)
        if (!this.dirs.has(dir)) {
          await fsp.mkdir(dir, { recursive: true })
          this.dirs.add(dir)
        }
        const tmp = path.join(dir, `tmp_obj_${randomBytes(6).toString('hex')}`)
        const fh = await fsp.open(tmp, 'wx', 0o444)
        try {
          await fh.writeFile(deflateSync(raw, { level: 1 }))
          await fh.sync()
        } finally {
          await fh.close()
        }
        await fsp.rename(tmp, final)
        dirs.add(dir)
        this.known.add(oid)
      }),
    )
    await Promise.all([...dirs].map(fsyncDir))
  }

  async readObject(oid: string): Promise<{ type: ObjectType; content: Buffer }> {
    let deflated: Buffer | undefined
    try {
      // Synchronous on purpose: a loose object is a few KB in the page cache, read in ~20 µs;
      // fs/promises costs four thread-pool round trips (open, stat, read, close), ~0.5 ms, which
      // made reading 20k rules 12 s of waiting.
      deflated = fs.readFileSync(this.loosePath(oid))
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
    if (deflated) {
      const raw = inflateSync(deflated)
      const sp = raw.indexOf(0x20)
      const nul = raw.indexOf(0, sp)
      return { type: raw.subarray(0, sp).toString('latin1') as ObjectType, content: raw.subarray(nul + 1) }
    }
    // Packed object (fetch, clone, gc): through `git cat-file` where git is installed, else (or
    // when git cannot find it) through isomorphic-git's pack reader.
    const reader = this.catFile()
    if (reader) {
      const viaGit = await reader.read(oid).catch(() => null)
      if (viaGit) return viaGit
    }
    const obj = await git.readObject({ fs, gitdir: this.gitdir, oid, format: 'content', cache: this.packCache })
    return { type: obj.type as ObjectType, content: Buffer.from(obj.object as Uint8Array) }
  }

  async readBlob(oid: string): Promise<Buffer> {
    const o = await this.readObject(oid)
    if (o.type !== 'blob') throw new Error(`object ${oid} is a ${o.type}, not a blob`)
    return o.content
  }

  readTree(oid: string): Promise<TreeEntry[]> {
    const cached = this.treeCache.get(oid)
    if (cached) return Promise.resolve(cached)
    let inflight = this.treeReads.get(oid)
    if (!inflight) {
      inflight = this.readObject(oid)
        .then((o) => {
          if (o.type !== 'tree') throw new Error(`object ${oid} is a ${o.type}, not a tree`)
          const entries = parseTree(o.content)
          if (this.treeCache.size >= this.treeCacheMax) this.treeCache.clear()
          this.treeCache.set(oid, entries)
          return entries
        })
        .finally(() => this.treeReads.delete(oid))
      this.treeReads.set(oid, inflight)
    }
    return inflight
  }

  async readCommit(oid: string): Promise<CommitInfo> {
    const o = await this.readObject(oid)
    if (o.type !== 'commit') throw new Error(`object ${oid} is a ${o.type}, not a commit`)
    return parseCommit(oid, o.content.toString('utf8'))
  }

  /** Remembers a tree just built so the next write does not read it back from disk. */
  rememberTree(oid: string, entries: TreeEntry[]): void {
    if (this.treeCache.size >= this.treeCacheMax) this.treeCache.clear()
    this.treeCache.set(oid, entries)
  }
}

export async function fsyncDir(dir: string): Promise<void> {
  const fh = await fsp.open(dir, 'r')
  try {
    await fh.sync()
  } finally {
    await fh.close()
  }
}

export function parseTree(buf: Buffer): TreeEntry[] {
  const entries: TreeEntry[] = []
  let i = 0
  while (i < buf.length) {
    const sp = buf.indexOf(0x20, i)
    const nul = buf.indexOf(0, sp)
    entries.push({
      mode: buf.subarray(i, sp).toString('latin1'),
      name: buf.subarray(sp + 1, nul).toString('utf8'),
      oid: buf.subarray(nul + 1, nul + 21).toString('hex'),
    })
    i = nul + 21
  }
  return entries
}

/** Git orders tree entries by name bytes, comparing a folder's name as if it ended with '/'. */
function treeSortKey(e: TreeEntry): Buffer {
  return Buffer.from(e.mode === TREE_MODE ? `${e.name}/` : e.name, 'utf8')
}

export function serializeTree(entries: TreeEntry[]): Buffer {
  const sorted = [...entries].sort((a, b) => Buffer.compare(treeSortKey(a), treeSortKey(b)))
  return Buffer.concat(
    sorted.map((e) => Buffer.concat([Buffer.from(`${e.mode} ${e.name}\0`, 'utf8'), Buffer.from(e.oid, 'hex')])),
  )
}

function parsePerson(line: string): Person {
  const m = /^(.*) <(.*)> (\d+) ([+-])(\d\d)(\d\d)$/.exec(line)
  if (!m) return { name: line, email: '', timestamp: 0, tzOffsetMinutes: 0 }
  const sign = m[4] === '-' ? -1 : 1
  return {
    name: m[1]!,
    email: m[2]!,
    timestamp: Number(m[3]),
    tzOffsetMinutes: sign * (Number(m[5]) * 60 + Number(m[6])),
  }
}

export function parseCommit(oid: string, text: string): CommitInfo {
  const end = text.indexOf('\n\n')
  const header = end < 0 ? text : text.slice(0, end)
  const message = end < 0 ? '' : text.slice(end + 2)
  const info: CommitInfo = {
    oid,
    tree: '',
    parents: [],
    author: parsePerson(''),
    committer: parsePerson(''),
    message,
  }
  for (const line of header.split('\n')) {
    if (line.startsWith(' ')) continue // continuation of gpgsig / mergetag
    const sp = line.indexOf(' ')
    const key = line.slice(0, sp)
    const value = line.slice(sp + 1)
    if (key === 'tree') info.tree = value
    else if (key === 'parent') info.parents.push(value)
    else if (key === 'author') info.author = parsePerson(value)
    else if (key === 'committer') info.committer = parsePerson(value)
  }
  return info
}

/** Names and emails go into commit headers: strip what git forbids there (<, >, newlines). */
export function cleanIdentity(s: string): string {
  return s.replace(/[<>\n\r\0]/g, '').trim() || 'unknown'
}

function formatPerson(p: Person): string {
  const off = Math.abs(p.tzOffsetMinutes)
  const tz = `${p.tzOffsetMinutes < 0 ? '-' : '+'}${String(Math.floor(off / 60)).padStart(2, '0')}${String(off % 60).padStart(2, '0')}`
  return `${cleanIdentity(p.name)} <${cleanIdentity(p.email)}> ${p.timestamp} ${tz}`
}

export function serializeCommit(c: Omit<CommitInfo, 'oid'>): Buffer {
  const lines = [`tree ${c.tree}`, ...c.parents.map((p) => `parent ${p}`)]
  lines.push(`author ${formatPerson(c.author)}`, `committer ${formatPerson(c.committer)}`)
  const message = c.message.endsWith('\n') ? c.message : `${c.message}\n`
  return Buffer.from(`${lines.join('\n')}\n\n${message}`, 'utf8')
}
