// OpenSSH's signature format (PROTOCOL.sshsig), read and checked in process: the armored
// `-----BEGIN SSH SIGNATURE-----` blob git stores in a commit's `gpgsig` header, the public key it
// names, and whether it signs a message under a namespace with a given key (Ed25519, ECDSA
// nistp256/384/521, RSA with SHA-2). Used where a spawn per commit would be too slow (history).
import { createHash, createPublicKey, type KeyObject, verify } from 'node:crypto'

export const SSHSIG_MAGIC = Buffer.from('SSHSIG')
const MAGIC = SSHSIG_MAGIC
const ARMOR = /^-----BEGIN SSH SIGNATURE-----\r?\n([A-Za-z0-9+/=\r\n]+)-----END SSH SIGNATURE-----\r?\n?$/

/** A cursor over SSH wire data (RFC 4251: uint32, string). */
export class Wire {
  private at = 0
  constructor(private readonly buf: Buffer) {}
  uint32(): number {
    if (this.at + 4 > this.buf.length) throw new Error('truncated')
    const v = this.buf.readUInt32BE(this.at)
    this.at += 4
    return v
  }
  bytes(n: number): Buffer {
    if (this.at + n > this.buf.length) throw new Error('truncated')
    const v = this.buf.subarray(this.at, this.at + n)
    this.at += n
    return v
  }
  string(): Buffer {
    return this.bytes(this.uint32())
  }
  get done(): boolean {
    return this.at === this.buf.length
  }
}

/** `string` of the SSH wire format: a uint32 length, then the bytes. */
export function sshString(b: Buffer | string): Buffer {
  const data = typeof b === 'string' ? Buffer.from(b) : b
  const len = Buffer.alloc(4)
  len.writeUInt32BE(data.length)
  return Buffer.concat([len, data])
}

export interface SshSignature {
  /** The signer's public key, as the wire blob (`ssh-ed25519 <base64 of this>` in a keys file). */
  publicKey: Buffer
  namespace: string
  hashAlgorithm: 'sha256' | 'sha512'
  /** The signature proper: its algorithm name and bytes. */
  algorithm: string
  signature: Buffer
}

/** Parses an armored SSH signature; null when it is not one. */
export function parseSshSignature(armored: string): SshSignature | null {
  const m = ARMOR.exec(armored)
  if (!m) return null
  try {
    const w = new Wire(Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64'))
    if (!w.bytes(6).equals(MAGIC) || w.uint32() !== 1) return null
    const publicKey = Buffer.from(w.string())
    const namespace = w.string().toString()
    w.string() // reserved
    const hash = w.string().toString()
    const sig = new Wire(w.string())
    if (!w.done || (hash !== 'sha256' && hash !== 'sha512')) return null
    const algorithm = sig.string().toString()
    const signature = Buffer.from(sig.string())
    return { publicKey, namespace, hashAlgorithm: hash, algorithm, signature }
  } catch {
    return null
  }
}

/** `SHA256:…`, as ssh-keygen prints a key's fingerprint. */
export function fingerprintOf(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`
}

/** The blob of a public key line (`ssh-ed25519 AAAA… comment`), or null. */
export function publicKeyBlob(line: string): Buffer | null {
  const m = /^(\S+)\s+([A-Za-z0-9+/=]+)/.exec(line.trim())
  if (!m) return null
  const blob = Buffer.from(m[2]!, 'base64')
  try {
    return new Wire(blob).string().toString() === m[1] ? blob : null
  } catch {
    return null
  }
}

const CURVES: Record<string, { crv: string; size: number; hash: string }> = {
  nistp256: { crv: 'P-256', size: 32, hash: 'sha256' },
  nistp384: { crv: 'P-384', size: 48, hash: 'sha384' },
  nistp521: { crv: 'P-521', size: 66, hash: 'sha512' },
}

const b64url = (b: Buffer) => b.toString('base64url')

/** An mpint without its sign byte, left-padded to `size` bytes. */
function unsigned(b: Buffer, size?: number): Buffer {
  let v = b
  while (v.length > 1 && v[0] === 0) v = v.subarray(1)
  return size && v.length < size ? Buffer.concat([Buffer.alloc(size - v.length), v]) : v
}

interface CheckedKey {
  key: KeyObject
  check(data: Buffer, algorithm: string, sig: Buffer): boolean
}

/** The last key imported: a history walk checks thousands of commits against the one service key. */
let lastKey: { blob: Buffer; key: CheckedKey } | undefined

function keyOf(blob: Buffer): CheckedKey {
  if (lastKey?.blob.equals(blob)) return lastKey.key
  const key = importKey(blob)
  lastKey = { blob: Buffer.from(blob), key }
  return key
}

/** The key as Node's crypto takes it, with how a signature over a message is checked. */
function importKey(blob: Buffer): CheckedKey {
  const w = new Wire(blob)
  const type = w.string().toString()
  if (type === 'ssh-ed25519') {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: b64url(w.string()) }, format: 'jwk' })
    return { key, check: (data, alg, sig) => alg === type && verify(null, data, key, sig) }
  }
  if (type === 'ssh-rsa') {
    const e = unsigned(w.string())
    const n = unsigned(w.string())
    const key = createPublicKey({ key: { kty: 'RSA', n: b64url(n), e: b64url(e) }, format: 'jwk' })
    const hashes: Record<string, string> = { 'rsa-sha2-256': 'sha256', 'rsa-sha2-512': 'sha512' }
    // OpenSSH never makes SHA-1 RSA signatures for SSHSIG and refuses them: so do we.
    return { key, check: (data, alg, sig) => hashes[alg] !== undefined && verify(hashes[alg]!, data, key, sig) }
  }
  const ec = /^ecdsa-sha2-(nistp256|nistp384|nistp521)$/.exec(type)
  if (ec) {
    const curve = CURVES[ec[1]!]!
    w.string() // the curve's name again
    const point = w.string()
    if (point[0] !== 4 || point.length !== 1 + 2 * curve.size) throw new Error('not an uncompressed point')
    const x = point.subarray(1, 1 + curve.size)
    const y = point.subarray(1 + curve.size)
    const key = createPublicKey({ key: { kty: 'EC', crv: curve.crv, x: b64url(x), y: b64url(y) }, format: 'jwk' })
    return {
      key,
      check: (data, alg, sig) => {
        if (alg !== type) return false
        const rs = new Wire(sig)
        const r = unsigned(rs.string(), curve.size)
        const s = unsigned(rs.string(), curve.size)
        const p1363 = Buffer.concat([r, s])
        return verify(curve.hash, data, { key, dsaEncoding: 'ieee-p1363' }, p1363)
      },
    }
  }
  throw new Error(`unsupported key type ${type}`)
}

/**
 * Whether `armored` is a valid signature of `message` under `namespace` by the key `publicKey`
 * (a wire blob): the key it names is that key, and the signature checks out over the blob
 * PROTOCOL.sshsig defines (magic, namespace, reserved, hash algorithm, hash of the message).
 */
export function verifySshSignature(armored: string, message: Buffer, publicKey: Buffer, namespace = 'git'): boolean {
  const sig = parseSshSignature(armored)
  if (!sig || sig.namespace !== namespace || !sig.publicKey.equals(publicKey)) return false
  try {
    const signed = Buffer.concat([
      MAGIC,
      sshString(namespace),
      sshString(''),
      sshString(sig.hashAlgorithm),
      sshString(createHash(sig.hashAlgorithm).update(message).digest()),
    ])
    return keyOf(publicKey).check(signed, sig.algorithm, sig.signature)
  } catch {
    return false
  }
}
