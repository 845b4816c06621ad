// A commit's signature as git stores it: the `gpgsig` header (each line of the armored signature
// after the first indented by one space) inserted at the end of the headers, over the commit
// object without it as the signed payload (git's commit.c, do_sign_commit / parse_signed_commit).

/** The commit object with `signature` (armored, ending in a newline) as its `gpgsig` header. */
export function addSignatureHeader(payload: Buffer, signature: string): Buffer {
  const text = payload.toString('utf8')
  const end = text.indexOf('\n\n')
  const at = end < 0 ? text.length : end + 1
  const sig = signature.replace(/\r\n/g, '\n')
  const body = sig.endsWith('\n') ? sig.slice(0, -1) : sig
  const header = `gpgsig ${body.split('\n').join('\n ')}\n`
  return Buffer.from(text.slice(0, at) + header + text.slice(at), 'utf8')
}

export interface CommitSignature {
  /** The armored signature (the header's lines unindented, with a final newline). */
  armored: string
  /** What was signed: the commit object without the `gpgsig` header. */
  payload: Buffer
}

/** The `gpgsig` signature of a commit object and the payload it signs, or undefined when unsigned. */
export function splitSignature(text: string): CommitSignature | undefined {
  const end = text.indexOf('\n\n')
  const headerEnd = end < 0 ? text.length : end + 1
  const lines = text.slice(0, headerEnd).split('\n')
  const kept: string[] = []
  const sig: string[] = []
  let inSig = false
  for (const line of lines) {
    if (inSig && line.startsWith(' ')) {
      sig.push(line.slice(1))
      continue
    }
    inSig = false
    if (line.startsWith('gpgsig ') && sig.length === 0) {
      inSig = true
      sig.push(line.slice('gpgsig '.length))
      continue
    }
    kept.push(line)
  }
  if (sig.length === 0) return undefined
  return {
    armored: `${sig.join('\n')}\n`,
    payload: Buffer.from(kept.join('\n') + text.slice(headerEnd), 'utf8'),
  }
}
