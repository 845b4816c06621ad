// `rulekeeper token create|list|revoke`: manages the API tokens of a data directory; works beside
// a running server (it re-reads the store within a second). The secret is printed once, alone on
// the last line of stdout.
import path from 'node:path'
import { PERMISSION_FLAGS, TokenStore, type Permission } from '../auth/token-store.js'
import { restrictUmask } from '../data-dir/data-dir-privacy.js'
import { parseArgs, UsageError } from './args.js'

const HELP = `Usage:
  rulekeeper token create --name NAME --permissions ViewRules[,ManageRules] [--expires-in 30d] [--json]
  rulekeeper token list [--json]
  rulekeeper token revoke ID

Tokens live in $RULEKEEPER_DATA_DIR/tokens.json (default ./data) as salted hashes only.
'create' prints the new secret once, alone on the last line of stdout.
--expires-in takes a number and a unit: s, m, h, d (e.g. 12h, 30d).
`

function parseDuration(s: string): number {
  const m = /^(\d{1,6})([smhd])$/.exec(s)
  if (!m) throw new UsageError(`--expires-in must look like 30d, 12h, 15m or 60s; got ${JSON.stringify(s)}`)
  return Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[m[2] as 's' | 'm' | 'h' | 'd'] * 1000
}

export async function tokenCommand(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  const [sub, ...rest] = argv
  const args = parseArgs(rest, ['name', 'permissions', 'expires-in'], ['json'])
  if (!sub || sub === '--help' || sub === '-h' || args.options.help) {
    process.stdout.write(HELP)
    return sub ? 0 : 2
  }
  // The data directory is private (0700/0600) even when this command is the first to create it.
  restrictUmask()
  const store = new TokenStore(path.resolve(env.RULEKEEPER_DATA_DIR || './data'))
  switch (sub) {
    case 'create': {
      const name = args.options.name
      if (typeof name !== 'string' || name.trim() === '' || name.length > 100)
        throw new UsageError('--name NAME is required (1–100 characters)')
      const perms = args.options.permissions
      if (typeof perms !== 'string')
        throw new UsageError('--permissions is required: ViewRules, ManageRules or both, comma-separated')
      const permissions: Permission[] = perms.split(',').map((p) => {
        const v = PERMISSION_FLAGS[p.trim()]
        if (!v) throw new UsageError(`unknown permission ${JSON.stringify(p)}; use ViewRules, ManageRules`)
        return v
      })
      const exp = args.options['expires-in']
      const expiresAt = typeof exp === 'string' ? new Date(Date.now() + parseDuration(exp)).toISOString() : null
      if (args.positionals.length > 0) throw new UsageError(`unexpected argument ${args.positionals[0]}`)
      const { token, secret } = store.create({ name, permissions, expiresAt })
      if (args.options.json) process.stdout.write(`${JSON.stringify(token)}\n`)
      else
        process.stdout.write(
          `created ${token.id} (${token.name}: ${token.permissions.join(', ')}${token.expiresAt ? `, expires ${token.expiresAt}` : ''})\n`,
        )
      process.stdout.write(`${secret}\n`)
      return 0
    }
    case 'list': {
      const list = store.list()
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
      if (!store.revoke(id)) {
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
