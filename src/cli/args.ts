// A small argument parser for the CLI: `--flag`, `--name value`, `--name=value`, positionals.
// Hand-written because node:util parseArgs rejects unknown options with messages that do not name
// our commands; this one reports usage errors as UsageError (exit code 2).
export class UsageError extends Error {}

export interface ParsedArgs {
  positionals: string[]
  options: Record<string, string | true>
  /** Every value of a repeatable option, in order (`--filter A=1 --filter B=2`). */
  lists: Record<string, string[]>
}

/**
 * `repeatable` options may be given more than once; each also takes the values that follow it
 * while they match `more` (panther_analysis_tool's `--filter A=1 B=2`).
 */
export function parseArgs(
  argv: string[],
  valued: readonly string[],
  flags: readonly string[],
  repeatable: Readonly<Record<string, RegExp | null>> = {},
): ParsedArgs {
  const out: ParsedArgs = { positionals: [], options: {}, lists: {} }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '--') {
      out.positionals.push(...argv.slice(i + 1))
      break
    }
    if (a === '-h') {
      out.options.help = true
      continue
    }
    if (!a.startsWith('--')) {
      out.positionals.push(a)
      continue
    }
    const eq = a.indexOf('=')
    const name = a.slice(2, eq < 0 ? undefined : eq)
    if (Object.hasOwn(repeatable, name)) {
      const v = eq >= 0 ? a.slice(eq + 1) : argv[++i]
      if (v === undefined) throw new UsageError(`option --${name} needs a value`)
      const list = out.lists[name] ?? []
      out.lists[name] = list
      list.push(v)
      const more = repeatable[name]
      while (more && i + 1 < argv.length && more.test(argv[i + 1]!)) list.push(argv[++i]!)
    } else if (flags.includes(name) || name === 'help') {
      if (eq >= 0) throw new UsageError(`option --${name} takes no value`)
      out.options[name] = true
    } else if (valued.includes(name)) {
      const v = eq >= 0 ? a.slice(eq + 1) : argv[++i]
      if (v === undefined) throw new UsageError(`option --${name} needs a value`)
      out.options[name] = v
    } else throw new UsageError(`unknown option --${name}`)
  }
  return out
}
