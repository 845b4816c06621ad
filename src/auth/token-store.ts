// API tokens, kept under the data directory as salted SHA-256 hashes only. The secret embeds the
// token id (`rk_<id>_<random>`), so a check is one lookup and one constant-time comparison. The
// file is replaced atomically under a lock file, so `rulekeeper token` can change it beside a
// running server, which re-reads it when its modification time changes.
import { createHash, hash, randomBytes } from 'node:crypto'
import { bytesEqual } from '../constant-time.js'
import fs from 'node:fs'
import path from 'node:path'
import { writeFileDurableSync } from '../durable-file.js'
import { RulekeeperError } from '../errors.js'

export const PERMISSIONS = ['View Rules', 'Manage Rules', 'View Alerts', 'Manage Alerts', 'Query Data'] as const
export type Permission = (typeof PERMISSIONS)[number]

/** Command-line spellings. */
export const PERMISSION_FLAGS: Record<string, Permission> = {
  ViewRules: 'View Rules',
  ManageRules: 'Manage Rules',
  ViewAlerts: 'View Alerts',
  ManageAlerts: 'Manage Alerts',
  QueryData: 'Query Data',
}

export interface TokenRecord {
  id: string
  name: string
  permissions: Permission[]
  createdAt: string
  expiresAt: string | null
  salt: string
  hash: string
  /** A secret chosen by the operator (RULEKEEPER_BOOTSTRAP_TOKEN) that does not embed the id. */
  freeform?: boolean
}

export interface TokenInfo {
  id: string
  name: string
  permissions: Permission[]
  createdAt: string
  expiresAt: string | null
  lastUsedAt: string | null
}

const SECRET_RE = /^rk_([A-Za-z0-9]{12})_([A-Za-z0-9_-]{43})$/

/** The token id a well-formed secret names (`rk_<id>_…` → `tok_<id>`; not a secret), else undefined. */
export function tokenIdOf(secret: string): string | undefined {
  const m = SECRET_RE.exec(secret)
  return m ? `tok_${m[1]}` : undefined
}

const hashDigest = (salt: string, secret: string) =>
  createHash('sha256').update(salt).update('\0').update(secret).digest()
const hashSecret = (salt: string, secret: string) => hashDigest(salt, secret).toString('hex')

function randomId(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
  return [...randomBytes(12)].map((b) => alphabet[b % alphabet.length]).join('')
}

export class TokenStore {
  private tokens = new Map<string, TokenRecord>()
  private mtimeMs = -1
  /** id → last use (ms since the epoch); a number, so the request path never formats a date. */
  private lastUsed = new Map<string, number>()
  /** Stored hashes as bytes, decoded once per token (the request path compares bytes, not hex). */
  private hashBytes = new WeakMap<TokenRecord, Buffer>()
  private usageDirty = false
  /**
   * Secrets that verified, keyed by their SHA-256 (never the secret itself) → the record and when
   * the entry stops being valid (its expiry). Only successes enter, so it holds at most one entry
   * per token; it is emptied whenever the token map is replaced (a reload after the file changed,
   * a create or a revoke), so a revocation is honoured as soon as the store is re-read.
   */
  private verified = new Map<string, { rec: TokenRecord; until: number }>()

  constructor(readonly dataDir: string) {}

  get file(): string {
    return path.join(this.dataDir, 'tokens.json')
  }

  private get usageFile(): string {
    return path.join(this.dataDir, 'token-usage.json')
  }

  /** Re-reads the file if it changed since the last read. Cheap: one stat. */
  refresh(): void {
    let st: fs.Stats
    try {
      st = fs.statSync(this.file)
    } catch {
      if (this.mtimeMs !== 0) {
        this.tokens = new Map()
        this.verified.clear()
      }
      this.mtimeMs = 0
      return
    }
    if (st.mtimeMs === this.mtimeMs && this.tokens.size > 0) return
    const list = JSON.parse(fs.readFileSync(this.file, 'utf8')) as TokenRecord[]
    this.tokens = new Map(list.map((t) => [t.id, t]))
    this.verified.clear()
    this.mtimeMs = st.mtimeMs
  }

  isEmpty(): boolean {
    this.refresh()
    return this.tokens.size === 0
  }

  /**
   * The token a secret belongs to, or undefined (unknown, revoked, expired). Constant-time compare
   * on the first use of a secret; later uses hit the verified cache (one unsalted SHA-256).
   */
  verify(secret: string): TokenRecord | undefined {
    if (secret.length === 0 || secret.length > 512) return undefined
    const key = hash('sha256', secret, 'base64')
    const now = Date.now()
    let rec: TokenRecord | undefined
    const hit = this.verified.get(key)
    if (hit) {
      if (hit.until <= now) {
        this.verified.delete(key)
        return undefined
      }
      rec = hit.rec
    } else {
      rec = this.check(secret)
      if (!rec) return undefined
      const until = rec.expiresAt ? Date.parse(rec.expiresAt) : Infinity
      if (until <= now) return undefined
      this.verified.set(key, { rec, until })
    }
    this.lastUsed.set(rec.id, now)
    this.usageDirty = true
    return rec
  }

  /** The salted-hash check of a secret against the stored tokens (no expiry check). */
  private check(secret: string): TokenRecord | undefined {
    const m = SECRET_RE.exec(secret)
    const candidates = m ? [this.tokens.get(`tok_${m[1]}`)] : [...this.tokens.values()].filter((t) => t.freeform)
    let rec: TokenRecord | undefined
    for (const c of candidates) {
      if (!c) continue
      const a = hashDigest(c.salt, secret)
      let b = this.hashBytes.get(c)
      if (!b) this.hashBytes.set(c, (b = Buffer.from(c.hash, 'hex')))
      if (bytesEqual(a, b)) rec = c
    }
    return rec
  }

  /** Applies a change to the file under its lock (so CLI and server never lose each other's edits). */
  private mutate(change: (list: TokenRecord[]) => TokenRecord[]): void {
    fs.mkdirSync(this.dataDir, { recursive: true, mode: 0o700 })
    const lock = `${this.file}.lock`
    let fd: number | undefined
    for (let i = 0; i < 200 && fd === undefined; i++) {
      try {
        fd = fs.openSync(lock, 'wx', 0o600)
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
        const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now())
        if (age > 5000) fs.rmSync(lock, { force: true })
        else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10)
      }
    }
    if (fd === undefined) throw new RulekeeperError('Unavailable', 'the token store is locked by another process')
    try {
      let list: TokenRecord[] = []
      try {
        list = JSON.parse(fs.readFileSync(this.file, 'utf8')) as TokenRecord[]
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
      }
      const next = change(list)
      writeFileDurableSync(this.file, JSON.stringify(next, null, 2), { mode: 0o600 })
    } finally {
      fs.closeSync(fd)
      fs.rmSync(lock, { force: true })
    }
    this.mtimeMs = -1
    this.refresh()
  }

  create(opts: { name: string; permissions: Permission[]; expiresAt?: string | null; secret?: string }): {
    token: TokenInfo
    secret: string
  } {
    const idPart = (opts.secret && SECRET_RE.exec(opts.secret)?.[1]) || randomId()
    const id = `tok_${idPart}`
    const secret = opts.secret ?? `rk_${idPart}_${randomBytes(32).toString('base64url')}`
    const salt = randomBytes(16).toString('hex')
    const rec: TokenRecord = {
      id,
      name: opts.name,
      permissions: [...new Set(opts.permissions)],
      createdAt: new Date().toISOString(),
      expiresAt: opts.expiresAt ?? null,
      salt,
      hash: hashSecret(salt, secret),
      ...(SECRET_RE.test(secret) ? {} : { freeform: true }),
    }
    this.mutate((list) => [...list.filter((t) => t.id !== id), rec])
    return { token: this.info(rec), secret }
  }

  revoke(id: string): boolean {
    let found = false
    this.mutate((list) => {
      const kept = list.filter((t) => t.id !== id)
      found = kept.length < list.length
      return kept
    })
    return found
  }

  list(): TokenInfo[] {
    this.refresh()
    return [...this.tokens.values()].map((t) => this.info(t))
  }

  private info(t: TokenRecord): TokenInfo {
    const used = this.lastUsed.get(t.id)
    let lastUsedAt = used !== undefined ? new Date(used).toISOString() : null
    if (!lastUsedAt) {
      try {
        lastUsedAt = (JSON.parse(fs.readFileSync(this.usageFile, 'utf8')) as Record<string, string>)[t.id] ?? null
      } catch {
        lastUsedAt = null
      }
    }
    return {
      id: t.id,
      name: t.name,
      permissions: t.permissions,
      createdAt: t.createdAt,
      expiresAt: t.expiresAt,
      lastUsedAt,
    }
  }

  /** Writes last-used times (the server calls this now and then; never on the request path). */
  flushUsage(): void {
    if (!this.usageDirty) return
    this.usageDirty = false
    let merged: Record<string, string> = {}
    try {
      merged = JSON.parse(fs.readFileSync(this.usageFile, 'utf8')) as Record<string, string>
    } catch {
      /* first write */
    }
    for (const [id, at] of this.lastUsed) merged[id] = new Date(at).toISOString()
    writeFileDurableSync(this.usageFile, JSON.stringify(merged), { mode: 0o600 })
  }
}

/**
 * Creates the bootstrap token when the store is empty: the secret is `envSecret` if given,
 * otherwise random and written to `<data dir>/bootstrap-token` (0600). Returns what to print.
 */
export function ensureBootstrapToken(store: TokenStore, envSecret: string | undefined): string | null {
  if (!store.isEmpty()) return null
  const { secret } = store.create({ name: 'bootstrap', permissions: [...PERMISSIONS], secret: envSecret || undefined })
  if (envSecret) return 'bootstrap token created from RULEKEEPER_BOOTSTRAP_TOKEN'
  const file = path.join(store.dataDir, 'bootstrap-token')
  fs.writeFileSync(file, `${secret}\n`, { mode: 0o600 })
  fs.chmodSync(file, 0o600)
  return `bootstrap token written to ${file}`
}
