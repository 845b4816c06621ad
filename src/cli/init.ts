// `rulekeeper init [DIR]`: a new rules repository from the template. DIR becomes a bare
// repository when it ends in `.git`, otherwise a normal repository with the template checked out.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { TEMPLATE_DIR } from '../main.js'
import { createRepositoryFromTemplate } from '../service/repo-template.js'
import { parseArgs, UsageError } from './args.js'

const HELP = `Usage: rulekeeper init [DIR] [--branch NAME]

Creates a new rules repository in DIR (default: the current directory) holding the template:
folder layout, a README for rule authors, and an example rule of each kind with tests.
DIR ending in .git becomes a bare repository; otherwise the files are checked out too
(that needs the git binary). DIR must not contain a repository already.
`

export async function initCommand(argv: string[]): Promise<number> {
  const args = parseArgs(argv, ['branch'], [])
  if (args.options.help) {
    process.stdout.write(HELP)
    return 0
  }
  if (args.positionals.length > 1) throw new UsageError('at most one DIR')
  const dir = path.resolve(args.positionals[0] ?? '.')
  const branch = typeof args.options.branch === 'string' ? args.options.branch : 'main'
  const committer = { name: 'rulekeeper', email: 'rulekeeper@localhost' }
  const bare = dir.endsWith('.git')
  const gitdir = bare ? dir : path.join(dir, '.git')
  if (fs.existsSync(path.join(gitdir, 'HEAD'))) throw new Error(`${dir} already holds a Git repository`)
  await createRepositoryFromTemplate(gitdir, branch, TEMPLATE_DIR, committer)
  if (!bare) {
    fs.writeFileSync(
      path.join(gitdir, 'config'),
      fs.readFileSync(path.join(gitdir, 'config'), 'utf8').replace(/bare = true/, 'bare = false'),
    )
    execFileSync('git', ['checkout', '-f', branch], { cwd: dir, stdio: 'ignore' })
  }
  process.stdout.write(`created a rules repository in ${dir} (branch ${branch})\n`)
  return 0
}
