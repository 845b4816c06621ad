// `rulekeeper token create|list|revoke`: manages the API tokens of the server's data directory
// (resolved as the server resolves it); works beside a running server (it re-reads the store within
// a second). The secret is printed once: alone on the last line, or as a field of `--json`.
import fs from 'node:fs'
import path from 'node:path'
import { PERMISSION_FLAGS, TokenStore, type Permission } from '../auth/token-store.js'
import { loadServiceConfig } from '../config-sections.js'
import { restrictUmask } from '../data-dir/data-dir-privacy.js'
import { parseArgs, UsageError } from './args.js'

const HELP = `Usage:
  rulekeeper token create --name NAME --permissions ViewRules[,ManageRules,ViewAlerts,ManageAlerts,QueryData] [--expires-in 30d] [--json]
  rulekeeper token list [--json]
  rulekeeper token revoke ID
Each also takes --data-dir DIR.

Tokens live in <data dir>/tokens.json as salted hashes only. The data directory is the server's:
--data-dir, else $RULEKEEPER_DATA_DIR, else dataDir of $RULEKEEPER_CONFIG, else ./data. Unless it
is named explicitly (--data-dir, the variable or the config file), it must already exist: a token
written to a folder the server does not read would never work.
'create' prints the new secret once, alone on the last line of stdout; with --json, one JSON
document whose "secret" field holds it.
--expires-in takes a number and a unit: s, m, h, d (e.g. 12h, 30d).
`

/**
 * The server's data directory, as `serve` resolves it (config/load.ts). Refuses a default one
 * that does not exist: run in the wrong folder, the command would create a store nobody reads.
 */
export function dataDirOf(option: string | true | undefined, env: Record<string, string | undefined>): string {
  if (typeof option === 'string' && option !== '') return path.resolve(option)
  if (option === true) throw new UsageError('--data-dir needs a directory')
  const configured = loadServiceConfig(env).dataDir
  const dir = path.resolve(configured)
  const explicit = Boolean(env.RULEKEEPER_DATA_DIR) || configured !== loadServiceConfig({}).dataDir
  if (explicit || fs.existsSync(dir)) return dir
  throw new Error(
    `no data directory at ${dir} (the default, relative to the current folder): run this where the server runs, ` +
      "or name the server's data directory with --data-dir DIR or RULEKEEPER_DATA_DIR",
  )
}

function parseDuration(s: string): number {
  const m = /^(\d{1,6})([smhd])$/.exec(s)
  if (!m) throw new UsageError(`--expires-in must look like 30d, 12h, 15m or 60s; got ${JSON.stringify(s)}`)
  return Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[m[2] as 's' | 'm' | 'h' | 'd'] * 1000
}

export async function tokenCommand(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  const [sub, ...rest] = argv
  const args = parseArgs(rest, ['name', 'permissions', 'expires-in', 'data-dir'], ['json'])
  if (!sub || sub === '--help' || sub === '-h' || args.options.help) {
    process.stdout.write(HELP)
    return sub ? 0 : 2
  }
  // The data directory is private (0700/0600) even when this command is the first to create it.
  restrictUmask()
  if (!['create', 'list', 'revoke'].includes(sub))
    throw new UsageError(`unknown token subcommand ${JSON.stringify(sub)}; use create, list or revoke`)
  // Resolved after the arguments are checked: a usage error is reported as such wherever it runs.
  const store = () => new TokenStore(dataDirOf(args.options['data-dir'], env))
  switch (sub) {
    case 'create': {
      const name = args.options.name
      if (typeof name !== 'string' || name.trim() === '' || name.length > 100)
        throw new UsageError('--name NAME is required (1–100 characters)')
      const perms = args.options.permissions
      if (typeof perms !== 'string')
        throw new UsageError(
          '--permissions is required: any of ViewRules, ManageRules, ViewAlerts, ManageAlerts, QueryData, comma-separated',
        )
      const permissions: Permission[] = perms.split(',').map((p) => {
        const v = PERMISSION_FLAGS[p.trim()]
        if (!v)
          throw new UsageError(
            `unknown permission ${JSON.stringify(p)}; use ViewRules, ManageRules, ViewAlerts, ManageAlerts, QueryData`,
          )
        return v
      })
      const exp = args.options['expires-in']
      const expiresAt = typeof exp === 'string' ? new Date(Date.now() + parseDuration(exp)).toISOString() : null
      if (args.positionals.length > 0) throw new UsageError(`unexpected argument ${args.positionals[0]}`)
      const { token, secret } = store().create({ name, permissions, expiresAt })
      if (args.options.json) {
        process.stdout.write(`${JSON.stringify({ ...token, secret }, null, 2)}\n`)
        return 0
      }
      process.stdout.write(
        `created ${token.id} (${token.name}: ${token.permissions.join(', ')}${token.expiresAt ? `, expires ${token.expiresAt}` : ''})\n`,
      )
      process.stdout.write(`${secret}\n`)
      return 0
    }
    case 'list': {
      const list = store().list()
      if (args.options.json) process.stdout.write(`${JSON.stringify(list, null, 2)}\n`)
      else {
        process.stdout.write(
          'ID                  NAME                 PERMISSIONS                 CREATED                   LAST USED\n',
        )
        for (const t of list) {
          process.stdout.write(
            `${t.id.padEnd(20)}${t.name.slice(0, 20).padEnd(21)}${t.permissions.join(',').padEnd(28)}${t.createdAt.padEnd(26)}${t.lastUsedAt ?? '-'}\n`,
          )
        }
      }
      return 0
    }
    case 'revoke': {
      const id = args.positionals[0]
      if (!id || args.positionals.length > 1) throw new UsageError('revoke takes exactly one token ID (see token list)')
      if (!store().revoke(id)) {
        process.stderr.write(`rulekeeper token: no token ${id}\n`)
        return 1
      }
      process.stdout.write(`revoked ${id}\n`)
      return 0
    }
    default:
      throw new UsageError(`unknown token subcommand ${JSON.stringify(sub)}; use create, list or revoke`)
  }
}
