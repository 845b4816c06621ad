// Git's object codec: an object is `<type> <size>\0<content>`, named by the SHA-1 of those bytes.
import { createHash } from 'node:crypto'

export type ObjectType = 'blob' | 'tree' | 'commit' | 'tag'

export interface GitObject {
  type: ObjectType
  content: Buffer
}

/** The object's name and its raw bytes (header + content), as a loose object stores them deflated. */
export function hashObject(type: ObjectType, content: Buffer): { oid: string; raw: Buffer } {
  const raw = Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content])
  return { oid: createHash('sha1').update(raw).digest('hex'), raw }
}

/** Splits raw object bytes (inflated loose object) into type and content. */
export function unwrapObject(raw: Buffer): GitObject {
  const sp = raw.indexOf(0x20)
  const nul = raw.indexOf(0, sp)
  return { type: raw.subarray(0, sp).toString('latin1') as ObjectType, content: raw.subarray(nul + 1) }
}
