// Who may post to a log source. Each source gets an authenticator built from its config; it decides
// from the headers alone, before a byte of the body is read. Only Bearer exists today; an HMAC
// source would add a second hook over the raw body, which is why the interface is split this way.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { mkdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { writeFileDurable } from '../durable-file.js'
import { RulekeeperError } from '../errors.js'
import type { LogSourceConfig } from './config.js'

export interface SourceAuthenticator {
  /** Throws Unauthorized unless the request headers carry this source's credential. */
  checkHeaders(headers: Record<string, string | string[] | undefined>): void
  /** A line for the start-up banner (never the secret itself). */
  bannerLine: string
}

// Comparing digests keeps the comparison constant-time whatever the length of what was sent.
const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest()

export async function createSourceAuthenticator(
  source: LogSourceConfig,
  dataDir: string,
  env: Record<string, string | undefined>,
): Promise<SourceAuthenticator> {
  const fromEnv = env[source.auth.tokenEnv]
  let token: string
  let bannerLine: string
  if (fromEnv !== undefined && fromEnv !== '') {
    token = fromEnv
    bannerLine = `log source ${source.id}: POST /http/${source.id}, Bearer token from ${source.auth.tokenEnv}`
  } else {
    const file = path.join(dataDir, 'log-sources', `${source.id}.token`)
    token = await readOrCreateTokenFile(file)
    bannerLine = `log source ${source.id}: POST /http/${source.id}, Bearer token in ${file}`
  }
  const expected = digest(token)
  return {
    bannerLine,
    checkHeaders(headers) {
      const value = headers.authorization
      const header = Array.isArray(value) ? value[0] : value
      const m = header === undefined ? null : /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header)
      if (!m) throw new RulekeeperError('Unauthorized', `log source ${source.id} needs an Authorization: Bearer header`)
      if (!timingSafeEqual(digest(m[1]!), expected)) {
        throw new RulekeeperError('Unauthorized', `the token is not valid for log source ${source.id}`)
      }
    },
  }
}

/** The generated secret lives in a 0600 file so the operator can hand it to the vendor. */
async function readOrCreateTokenFile(file: string): Promise<string> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 })
  try {
    const text = (await readFile(file, 'utf8')).trim()
    if (text !== '') return text
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  const token = randomBytes(32).toString('base64url')
  // Written whole or not at all; an empty file an older version's crash left is replaced (above).
  await writeFileDurable(file, `${token}\n`, { mode: 0o600 })
  return token
}
