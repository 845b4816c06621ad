// Git's object database for the bare rules repository: typed reads (blob, tree, commit) over
// read-object.ts, a cache of parsed trees, and batched durable writes of loose objects.
import type { CatFileReader } from './git-cat-file.js'
import { parseCommit, type CommitInfo } from './git-commit.js'
import { parseTree, type TreeEntry } from './git-tree.js'
import type { GitObject } from './hash-object.js'
import { objectSize, readObject } from './read-object.js'
import { PackedObjectReader } from './read-object-packed.js'
import { LooseObjectWriter, type ObjectBatch } from './write-object-loose.js'

export class ObjectDb {
  private readonly treeCache = new Map<string, TreeEntry[]>()
  private readonly treeCacheMax = 50_000
  /** Tree reads in flight: concurrent lookups of one tree share one read. */
  private readonly treeReads = new Map<string, Promise<TreeEntry[]>>()
  /** Name lookups of large trees, built on first use per parsed tree. */
  private readonly byName = new WeakMap<TreeEntry[], Map<string, TreeEntry>>()
  private readonly packed: PackedObjectReader
  private readonly writer: LooseObjectWriter

  /** `useGitBinary`: read packed objects through `git cat-file` when git is installed (default). */
  constructor(
    readonly gitdir: string,
    useGitBinary = true,
  ) {
    this.packed = new PackedObjectReader(gitdir, useGitBinary)
    this.writer = new LooseObjectWriter(gitdir)
  }

  /** The `git cat-file` process packed reads go through, if one was started. */
  get catFileReader(): CatFileReader | null {
    return this.packed.catFileReader
  }

  /** Stops the `git cat-file` process, if one was started (a later read starts another). */
  close(): void {
    this.packed.close()
  }

  /** Writes every object of the batch durably: temp file, fsync, rename, then fsync the folders. */
  writeBatch(batch: ObjectBatch): Promise<void> {
    return this.writer.writeBatch(batch)
  }

  readObject(oid: string): Promise<GitObject> {
    return readObject(this.packed, oid)
  }

  /** A blob's (or any object's) size in bytes, without reading its content. */
  sizeOf(oid: string): Promise<number> {
    return objectSize(this.packed, oid)
  }

  /** The entry named `name` of a tree (a map per cached tree: a lookup costs O(1), not O(entries)). */
  async entryOf(treeOid: string, name: string): Promise<TreeEntry | undefined> {
    const entries = await this.readTree(treeOid)
    let byName = this.byName.get(entries)
    if (!byName) this.byName.set(entries, (byName = new Map(entries.map((e) => [e.name, e]))))
    return byName.get(name)
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
