// The steps by which this service writes a file that must survive a crash whole or not at all:
// write a temp file in the target's folder, fsync it, rename it over the target, fsync the folder
// (without that last fsync the rename itself can be lost in a power cut). Git objects and refs, the
// token store, the caches under <data>/cache/, the delivery journal and the audit log's rejected
// tails use them; detection's checkpoint takes the same steps by hand (detection-store.ts), to
// overlap its temp's write with the batch's fsyncs.
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import fsp, { type FileHandle } from 'node:fs/promises'
import path from 'node:path'

/** What to write: the bytes, or a function that writes them to the open temp file (streaming). */
export type DurableContent = string | Uint8Array | ((fh: FileHandle) => Promise<void>)

export interface DurableWriteOptions {
  /**
   * The temp file, in the target's folder. Default `<file>.<pid>.<random>.tmp`, the pattern the
   * cache cleanup (service/cache-files.ts) removes after a crash.
   */
  tmp?: string
  /** Mode of the new file (default 0o666, narrowed by the umask). */
  mode?: number
  /** 'w' (default): a temp file a crashed run left under the same name is overwritten; 'wx': never. */
  flag?: 'w' | 'wx'
  /** false: the caller fsyncs the folder itself, once for a batch of files (default true). */
  syncDir?: boolean
}

const defaultTmp = (file: string) => `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`

export async function fsyncDir(dir: string): Promise<void> {
  const fh = await fsp.open(dir, 'r')
  try {
    await fh.sync()
  } finally {
    await fh.close()
  }
}

function fsyncDirSync(dir: string): void {
  const fd = fs.openSync(dir, 'r')
  try {
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
}

/** Writes the content to an open temp file, fsyncs and closes it (closed even when a step fails). */
export async function writeSynced(fh: FileHandle, content: DurableContent): Promise<void> {
  try {
    if (typeof content === 'function') await content(fh)
    else await fh.writeFile(content)
    await fh.sync()
  } finally {
    await fh.close()
  }
}

/** Renames a synced temp file over `file`, then (unless told not to) fsyncs the folder. */
export async function renameDurable(tmp: string, file: string, syncDir = true): Promise<void> {
  await fsp.rename(tmp, file)
  if (syncDir) await fsyncDir(path.dirname(file))
}

/** Replaces `file` durably (temp, fsync, rename, fsync the folder); the temp is removed on failure. */
export async function writeFileDurable(
  file: string,
  content: DurableContent,
  opts: DurableWriteOptions = {},
): Promise<void> {
  const tmp = opts.tmp ?? defaultTmp(file)
  const fh = await fsp.open(tmp, opts.flag ?? 'w', opts.mode ?? 0o666)
  try {
    await writeSynced(fh, content)
    await fsp.rename(tmp, file)
  } catch (err) {
    await fsp.rm(tmp, { force: true }).catch(() => {})
    throw err
  }
  if (opts.syncDir ?? true) await fsyncDir(path.dirname(file))
}

/** writeFileDurable for synchronous callers (the token store, a last save at shutdown). */
export function writeFileDurableSync(
  file: string,
  content: string | Uint8Array,
  opts: Omit<DurableWriteOptions, 'syncDir'> = {},
): void {
  const tmp = opts.tmp ?? defaultTmp(file)
  const fd = fs.openSync(tmp, opts.flag ?? 'w', opts.mode ?? 0o666)
  try {
    try {
      fs.writeFileSync(fd, content)
      fs.fsyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
    fs.renameSync(tmp, file)
  } catch (err) {
    fs.rmSync(tmp, { force: true })
    throw err
  }
  fsyncDirSync(path.dirname(file))
}
