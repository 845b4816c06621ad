// Files under `<data>/cache/` (the persisted index, the history metadata) are start-up shortcuts,
// written to a temp file and renamed. A crash can leave such temp files behind; they are removed
// when the cache is next read (the data-dir lock makes this process the only writer).
import fsp from 'node:fs/promises'
import path from 'node:path'

/** Removes `<file>.*.tmp` left by interrupted saves of `file`. */
export async function removeTempFiles(file: string): Promise<void> {
  const dir = path.dirname(file)
  const prefix = `${path.basename(file)}.`
  const names = await fsp.readdir(dir).catch(() => [] as string[])
  // Best effort: a leftover that cannot be removed is only wasted space, never a reason not to start.
  await Promise.all(
    names
      .filter((n) => n.startsWith(prefix) && n.endsWith('.tmp'))
      .map((n) => fsp.rm(path.join(dir, n), { force: true }).catch(() => {})),
  )
}
