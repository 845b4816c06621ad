// Packed objects (fetch, clone, gc): through `git cat-file` where git is installed, else (or when
// git cannot find one) through isomorphic-git's pack reader.
import fs from 'node:fs'
import git from 'isomorphic-git'
import { gitBinaryAvailable } from './git-binary.js'
import { CatFileReader } from './git-cat-file.js'
import type { GitObject, ObjectType } from './hash-object.js'

export class PackedObjectReader {
  /** isomorphic-git's parsed pack indexes, kept between reads (without it every read re-parses them). */
  private readonly packCache: object = {}
  private reader: CatFileReader | null = null
  /** `git cat-file --batch-check`: sizes without contents. */
  private sizer: CatFileReader | null = null
  /** git cat-file processes that failed; after a few, packed reads stay with isomorphic-git. */
  private catFileFailures = 0

  /** `useGitBinary`: read through `git cat-file` when git is installed. */
  constructor(
    readonly gitdir: string,
    private readonly useGitBinary: boolean,
  ) {}

  private catFile(): CatFileReader | null {
    if (!this.useGitBinary || this.catFileFailures >= 3 || !gitBinaryAvailable()) return null
    if (this.reader?.broken) {
      this.reader = null
      this.catFileFailures++
      if (this.catFileFailures >= 3) return null
    }
    this.reader ??= new CatFileReader(this.gitdir)
    return this.reader
  }

  /** The `git cat-file` process reads go through now, if one was started. */
  get catFileReader(): CatFileReader | null {
    return this.reader
  }

  async read(oid: string): Promise<GitObject> {
    const reader = this.catFile()
    if (reader) {
      const viaGit = await reader.read(oid).catch(() => null)
      if (viaGit) return viaGit
    }
    const obj = await git.readObject({ fs, gitdir: this.gitdir, oid, format: 'content', cache: this.packCache })
    return { type: obj.type as ObjectType, content: Buffer.from(obj.object as Uint8Array) }
  }

  /**
   * The object's size without reading it, through `git cat-file --batch-check`. Without git, the
   * fallback reads the object (isomorphic-git has no header-only read of a packed object).
   */
  async size(oid: string): Promise<number> {
    if (this.useGitBinary && this.catFileFailures < 3 && gitBinaryAvailable()) {
      if (this.sizer?.broken) this.sizer = null
      this.sizer ??= new CatFileReader(this.gitdir, 'sizes')
      const info = await this.sizer.info(oid).catch(() => null)
      if (info) return info.size
    }
    return (await this.read(oid)).content.length
  }

  /** Stops the `git cat-file` processes, if any were started (a later read starts another). */
  close(): void {
    this.reader?.close()
    this.reader = null
    this.sizer?.close()
    this.sizer = null
  }
}
