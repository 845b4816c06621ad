// Writes loose objects directly (zlib + sha1, durable-file's temp, fsync, rename) because
// isomorphic-git's writers deflate in JavaScript and re-read config per call (see spec/quality.md).
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { deflateSync } from 'node:zlib'
import { fsyncDir, writeFileDurable } from '../durable-file.js'
import { hashObject, type ObjectType } from './hash-object.js'
import { loosePath } from './read-object-loose.js'

/** A set of new objects written together and made durable with one round of fsyncs. */
export class ObjectBatch {
  readonly objects = new Map<string, Buffer>()
  add(type: ObjectType, content: Buffer): string {
    const { oid, raw } = hashObject(type, content)
    if (!this.objects.has(oid)) this.objects.set(oid, raw)
    return oid
  }
}

export class LooseObjectWriter {
  /** Objects known to exist on disk (written or seen there by us); saves a stat per write. */
  private readonly known = new Set<string>()
  /** Fan-out folders (objects/xx) known to exist. */
  private readonly dirs = new Set<string>()

  constructor(readonly gitdir: string) {}

  /** Writes every object of the batch durably: temp file, fsync, rename, then fsync the folders once. */
  async writeBatch(batch: ObjectBatch): Promise<void> {
    const dirs = new Set<string>()
    await Promise.all(
      [...batch.objects].map(async ([oid, raw]) => {
        if (this.known.has(oid)) return
        const final = loosePath(this.gitdir, oid)
        if (fs.existsSync(final)) {
          this.known.add(oid)
          return
        }
        const dir = path.dirname(final)
        if (!this.dirs.has(dir)) {
          await fsp.mkdir(dir, { recursive: true })
          this.dirs.add(dir)
        }
        await writeFileDurable(final, deflateSync(raw, { level: 1 }), {
          tmp: path.join(dir, `tmp_obj_${randomBytes(6).toString('hex')}`),
          flag: 'wx',
          mode: 0o444,
          syncDir: false,
        })
        dirs.add(dir)
        this.known.add(oid)
      }),
    )
    await Promise.all([...dirs].map(fsyncDir))
  }
}
