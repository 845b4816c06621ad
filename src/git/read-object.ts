// Reads an object wherever it is stored: loose first (what this service writes), then packed.
import type { GitObject } from './hash-object.js'
import { readObjectLoose } from './read-object-loose.js'
import type { PackedObjectReader } from './read-object-packed.js'

export async function readObject(packed: PackedObjectReader, oid: string): Promise<GitObject> {
  return readObjectLoose(packed.gitdir, oid) ?? (await packed.read(oid))
}
