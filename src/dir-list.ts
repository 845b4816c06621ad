// Listing a folder that may not exist yet (a log type's partitions, an output folder before its
// first write): its names sorted, none when it is missing; any other error is thrown. Its visible
// sub-folders alone (log types, replica folders): hidden and `_`-prefixed ones (`_rejected`) left out.
import { readdir } from 'node:fs/promises'

export async function listSorted(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort()
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
}

export async function listVisibleFolders(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true }))
      .filter((e) => e.isDirectory() && !e.name.startsWith('_') && !e.name.startsWith('.'))
      .map((e) => e.name)
      .sort()
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
}
