// Listing a folder that may not exist yet (a log type's partitions, an output folder before its
// first write): its names sorted, none when it is missing; any other error is thrown.
import { readdir } from 'node:fs/promises'

export async function listSorted(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort()
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
}
