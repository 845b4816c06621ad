// An unencrypted Ed25519 key in OpenSSH's private key format (PROTOCOL.key, `openssh-key-v1`),
// read into a Node crypto key, and SSH signatures made with it in process: Ed25519 is
// deterministic, so the armored signature is byte for byte the one `ssh-keygen -Y sign` makes
// (tested), without a process per commit. Any other key is left to ssh-keygen (commit-signer.ts).
import { createHash, createPrivateKey, type KeyObject, sign } from 'node:crypto'
import { SSHSIG_MAGIC, sshString, Wire } from './sshsig.js'

const AUTH_MAGIC = Buffer.from('openssh-key-v1\0')
const ARMOR = /-----BEGIN OPENSSH PRIVATE KEY-----([A-Za-z0-9+/=\s]+)-----END OPENSSH PRIVATE KEY-----/

export interface Ed25519Key {
  privateKey: KeyObject
  /** The public key's wire blob. */
  publicKey: Buffer
}

/** The key of an OpenSSH private key file's text, when it is one unencrypted Ed25519 key; else null. */
export function readEd25519Key(text: string): Ed25519Key | null {
  const m = ARMOR.exec(text)
  if (!m) return null
  try {
    const w = new Wire(Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64'))
    if (!w.bytes(AUTH_MAGIC.length).equals(AUTH_MAGIC)) return null
    if (w.string().toString() !== 'none' || w.string().toString() !== 'none') return null // encrypted
    w.string() // kdf options
    if (w.uint32() !== 1) return null
    const publicKey = Buffer.from(w.string())
    const priv = new Wire(w.string())
    const check = priv.uint32()
    if (check !== priv.uint32()) return null // the two check words differ: a wrong passphrase's mark
    if (priv.string().toString() !== 'ssh-ed25519') return null
    const pub = priv.string()
    const secret = priv.string() // seed || public key
    if (pub.length !== 32 || secret.length !== 64 || !secret.subarray(32).equals(pub)) return null
    const jwk = {
      kty: 'OKP',
      crv: 'Ed25519',
      d: secret.subarray(0, 32).toString('base64url'),
      x: pub.toString('base64url'),
    }
    return { privateKey: createPrivateKey({ key: jwk, format: 'jwk' }), publicKey }
  } catch {
    return null
  }
}

/** The armored SSH signature (PROTOCOL.sshsig, SHA-512) of `message` under `namespace`. */
export function signEd25519(key: Ed25519Key, message: Buffer, namespace = 'git'): string {
  const signed = Buffer.concat([
    SSHSIG_MAGIC,
    sshString(namespace),
    sshString(''),
    sshString('sha512'),
    sshString(createHash('sha512').update(message).digest()),
  ])
  const sig = sign(null, signed, key.privateKey)
  const blob = Buffer.concat([
    SSHSIG_MAGIC,
    Buffer.from([0, 0, 0, 1]),
    sshString(key.publicKey),
    sshString(namespace),
    sshString(''),
    sshString('sha512'),
    sshString(Buffer.concat([sshString('ssh-ed25519'), sshString(sig)])),
  ])
  const lines = blob.toString('base64').match(/.{1,70}/g) ?? []
  return `-----BEGIN SSH SIGNATURE-----\n${lines.join('\n')}\n-----END SSH SIGNATURE-----\n`
}
