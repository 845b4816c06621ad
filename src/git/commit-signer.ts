// The service's signing key: SSH signatures as git makes them with `gpg.format=ssh` (namespace
// `git`): an Ed25519 key in process (openssh-key.ts), any other by OpenSSH's own
// `ssh-keygen -Y sign` with the payload on stdin. The key is never logged or copied anywhere; a
// key file that others can read is refused at start, as ssh-keygen itself would refuse it.
import { execFile, spawn } from 'node:child_process'
import fsp from 'node:fs/promises'
import { promisify } from 'node:util'
import { configInvalid } from '../config/problems.js'
import { readEd25519Key, signEd25519 } from './openssh-key.js'
import { fingerprintOf, publicKeyBlob } from './sshsig.js'

const run = promisify(execFile)

export interface CommitSigner {
  /** The public key's wire blob: what a signature names as its key. */
  readonly publicKey: Buffer
  /** `SHA256:…`, as ssh-keygen and git print it. */
  readonly fingerprint: string
  /** The armored signature of `payload` (namespace `git`), ending with a newline. */
  sign(payload: Buffer): Promise<string>
}

const KEY_PATH = ['git', 'signing', 'sshKeyFile'] as const

function refuse(message: string): Error {
  return configInvalid('invalid configuration', [{ path: KEY_PATH, message }])
}

/** Opens the signing key: a private file (no group or other bits) holding a passphrase-less OpenSSH key. */
export async function openSshSigner(keyFile: string): Promise<CommitSigner> {
  let mode: number
  try {
    mode = (await fsp.stat(keyFile)).mode
  } catch (err) {
    throw refuse(`cannot read the signing key: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  if ((mode & 0o077) !== 0)
    throw refuse(
      `the signing key is readable by others (mode ${(mode & 0o777).toString(8)}); make it private: chmod 600`,
    )
  // Ed25519 is signed in process (the same bytes as ssh-keygen's, without a process per commit).
  const ed25519 = readEd25519Key(await fsp.readFile(keyFile, 'utf8').catch(() => ''))
  if (ed25519) {
    const publicKey = ed25519.publicKey
    return { publicKey, fingerprint: fingerprintOf(publicKey), sign: async (payload) => signEd25519(ed25519, payload) }
  }
  let line: string
  try {
    // `-P ''`: an encrypted key fails here rather than prompting for its passphrase.
    line = (await run('ssh-keygen', ['-y', '-P', '', '-f', keyFile], { timeout: 10_000 })).stdout.trim()
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string }
    if (e.code === 'ENOENT') throw refuse('ssh-keygen is not installed (Debian: apt-get install openssh-client)')
    throw refuse(`not a usable OpenSSH private key (a passphrase-less one): ${(e.stderr ?? '').trim()}`)
  }
  const publicKey = publicKeyBlob(line)
  if (!publicKey) throw refuse('ssh-keygen did not give a public key for it')
  return { publicKey, fingerprint: fingerprintOf(publicKey), sign: (payload) => signWithSshKeygen(keyFile, payload) }
}

function signWithSshKeygen(keyFile: string, payload: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('ssh-keygen', ['-Y', 'sign', '-n', 'git', '-f', keyFile], {
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: 30_000,
    })
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout.on('data', (b: Buffer) => out.push(b))
    child.stderr.on('data', (b: Buffer) => err.push(b))
    child.on('error', reject)
    child.on('close', (code) => {
      const sig = Buffer.concat(out).toString('utf8')
      if (code === 0 && sig.startsWith('-----BEGIN SSH SIGNATURE-----')) resolve(sig)
      else reject(new Error(`ssh-keygen could not sign the commit: ${Buffer.concat(err).toString('utf8').trim()}`))
    })
    child.stdin.on('error', () => {}) // an early exit is reported by 'close'
    child.stdin.end(payload)
  })
}
