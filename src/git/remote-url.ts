// What `git.remote.url` names: a smart-HTTP(S) URL, or a repository on this machine (a path,
// relative to the server's working directory like `dataDir`, or a `file://` URL). Anything git
// would reach over ssh or its own protocol is refused here with a message naming the way out.
// And what logs and status may show of such a URL: never its userinfo, query or fragment.
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { RulekeeperError } from '../errors.js'

export type RemoteLocation = { kind: 'http'; url: string } | { kind: 'local'; path: string }

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//

/** How messages name the setting a remote came from. */
export const REMOTE_SETTING = 'git.remote.url (RULEKEEPER_GIT_URL)'

/** Classifies a configured remote; a local one is made absolute against `cwd`. */
export function parseRemoteLocation(raw: string, cwd: string, setting = REMOTE_SETTING): RemoteLocation {
  const invalid = (message: string) => new RulekeeperError('ConfigInvalid', `${setting}: ${message}`)
  if (raw.trim() === '') throw invalid('is empty; leave it null for the embedded repository')
  const scheme = SCHEME.exec(raw)?.[1]?.toLowerCase()
  if (scheme === 'http' || scheme === 'https') {
    try {
      new URL(raw)
    } catch {
      throw invalid(`is not a valid ${scheme} URL`)
    }
    return { kind: 'http', url: raw }
  }
  if (scheme === 'file') {
    let u: URL
    try {
      u = new URL(raw)
    } catch {
      throw invalid('is not a valid file:// URL')
    }
    if (u.host !== '' && u.host !== 'localhost')
      throw invalid(`a file:// URL names a path on this machine (file:///path), not on host ${u.host}`)
    if (u.search || u.hash) throw invalid('a file:// URL takes no query string or fragment')
    try {
      return { kind: 'local', path: path.resolve(fileURLToPath(u)) }
    } catch {
      throw invalid('is not a file:// URL of a path on this machine (an escaped slash, %2F, cannot be part of a path)')
    }
  }
  if (scheme)
    throw invalid(
      `${scheme}:// remotes are not supported: use the repository's https URL, a local path or a file:// URL`,
    )
  // git reads `host:path` (a colon before any slash) as an ssh address; so do we, and refuse it.
  const colon = raw.indexOf(':')
  if (colon >= 0 && !raw.slice(0, colon).includes('/'))
    throw invalid(
      'looks like an ssh address (host:path), which is not supported: use the https URL, or write a local path whose name holds a colon as ./name',
    )
  return { kind: 'local', path: path.resolve(cwd, raw) }
}

/** The URL without userinfo, query string or fragment: what logs and status may show. */
export function sanitizeUrl(raw: string): string {
  try {
    const u = new URL(raw)
    return `${u.protocol}//${u.host}${u.pathname}`
  } catch {
    return '(invalid URL)'
  }
}

/** Every URL in a text replaced by its sanitized form (no userinfo, query or fragment). */
export function redactUrls(text: string): string {
  return text.replace(/[a-z][a-z0-9+.-]*:\/\/[^\s'"<>]+/gi, (u) => sanitizeUrl(u))
}

/** A remote's or git's text fit for a log: every URL sanitized, every form of the token replaced. */
export function redactRemoteText(text: string, username?: string, token?: string): string {
  let out = redactUrls(text)
  if (token) {
    const forms = [
      token,
      encodeURIComponent(token),
      Buffer.from(`${username ?? 'x-access-token'}:${token}`).toString('base64'),
    ]
    for (const f of forms) if (f.length >= 4) out = out.split(f).join('***')
  }
  return out
}
