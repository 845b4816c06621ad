// Whether a commit is signed by a key of an SSH allowed-signers file, checked the way git checks
// it with gpg.format=ssh (gpg-interface.c): `ssh-keygen -Y find-principals` names the principals
// of the signature's key, then `ssh-keygen -Y verify -n git` must accept the payload for one of
// them (so the file's namespaces=, valid-after=, cert-authority options are OpenSSH's to apply).
import { execFile } from 'node:child_process'
import fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { configInvalid } from '../config/problems.js'
import type { CommitInfo } from './git-commit.js'
import { fingerprintOf, parseSshSignature } from './sshsig.js'

/** Signed by an allowed key (and whose), or why the commit is not verified. */
export type Verdict = { ok: true; principal: string } | { ok: false; reason: string }

function sshKeygen(args: string[], input?: Buffer): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile('ssh-keygen', args, { timeout: 30_000, encoding: 'utf8' }, (err, stdout, stderr) => {
      const e = err as (NodeJS.ErrnoException & { code?: unknown }) | null
      if (e && typeof e.code === 'string') return reject(e) // not started (ENOENT)
      resolve({ code: e ? Number(e.code ?? 1) : 0, stdout, stderr })
    })
    child.stdin?.on('error', () => {})
    child.stdin?.end(input ?? Buffer.alloc(0))
  })
}

/** Checks `commit`'s signature against the allowed-signers file. */
export async function verifyCommit(
  commit: Pick<CommitInfo, 'oid' | 'signature'>,
  allowedSignersFile: string,
): Promise<Verdict> {
  const short = commit.oid.slice(0, 12)
  if (!commit.signature) return { ok: false, reason: `commit ${short} is not signed` }
  const parsed = parseSshSignature(commit.signature.armored)
  if (!parsed) return { ok: false, reason: `commit ${short} has a signature that is not an SSH signature` }
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'rk-verify-'))
  try {
    const sigFile = path.join(dir, 'commit.sig')
    await fsp.writeFile(sigFile, commit.signature.armored, { mode: 0o600 })
    const found = await sshKeygen(['-Y', 'find-principals', '-f', allowedSignersFile, '-s', sigFile])
    const principals = found.code === 0 ? found.stdout.split('\n').filter((l) => l.trim() !== '') : []
    if (principals.length === 0)
      return {
        ok: false,
        reason: `commit ${short} is signed by a key that is not an allowed signer (${fingerprintOf(parsed.publicKey)})`,
      }
    let last = ''
    for (const principal of principals) {
      const v = await sshKeygen(
        ['-Y', 'verify', '-f', allowedSignersFile, '-I', principal, '-n', 'git', '-s', sigFile],
        commit.signature.payload,
      )
      if (v.code === 0) return { ok: true, principal }
      last = v.stderr.trim()
    }
    return { ok: false, reason: `commit ${short}'s signature does not verify: ${last}` }
  } finally {
    await fsp.rm(dir, { recursive: true, force: true })
  }
}

/** The allowed-signers file must be there at start (a typo must not hold every revision, silently). */
export async function checkAllowedSignersFile(file: string): Promise<void> {
  try {
    await fsp.access(file, fsp.constants.R_OK)
  } catch (err) {
    throw configInvalid('invalid configuration', [
      {
        path: ['git', 'verify', 'allowedSignersFile'],
        message: `cannot read the allowed signers: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      },
    ])
  }
}
