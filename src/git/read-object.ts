// Reads an object, or only its size, wherever it is stored: loose first (what this service
// writes), then packed.
import type { GitObject } from './hash-object.js'
import { readLooseHeader, readObjectLoose } from './read-object-loose.js'
import type { PackedObjectReader } from './read-object-packed.js'

export async function readObject(packed: PackedObjectReader, oid: string): Promise<GitObject> {
  return readObjectLoose(packed.gitdir, oid) ?? (await packed.read(oid))
}

/** The object's content size in bytes, its content not read (loose: the header; packed: git's index). */
export async function objectSize(packed: PackedObjectReader, oid: string): Promise<number> {
  return readLooseHeader(packed.gitdir, oid)?.size ?? (await packed.size(oid))
}
