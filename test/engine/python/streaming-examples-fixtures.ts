// Shared by the tests of the example Python streaming rules (examples/rules/rules/): the
// examples as API bodies, a copy of the example tree where every test of one rule is flipped in a
// copy of its own, and a hand push of files into a test server's repository.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import YAML from 'yaml'
import { fileDataToView } from '../../../src/rules/mapping.js'
import type { InProcessServer } from '../../helpers/in-process.js'
import { tempDir } from '../../helpers/rulekeeper.js'
import { gitAs, PAT } from '../../helpers/git-as.js'

export const EXAMPLES = path.resolve(import.meta.dirname, '../../../examples/rules')
const RULES_DIR = 'rules/editor_rules'

export const HOOK_RULE = { id: 'Editor.Audit.TeamHookScriptAdded', file: `${RULES_DIR}/editor_hook_script_added.yml` }
export const UDM_RULE = { id: 'Editor.Audit.FailedLoginBurst', file: `${RULES_DIR}/editor_failed_login_burst.yml` }
export const DATA_MODEL_FILES = ['data_models/editor_audit.yml', 'data_models/editor_audit.py']

const read = (rel: string) => fs.readFileSync(path.join(EXAMPLES, rel), 'utf8')
const parse = (text: string) => YAML.parse(text, { version: '1.2', schema: 'core' }) as Record<string, unknown>

/** The example rule as the API's write body (what GET would return, minus metadata). */
export function exampleBody(file: string, edit?: (data: Record<string, unknown>) => void): Record<string, unknown> {
  const data = parse(read(file))
  edit?.(data)
  return fileDataToView('python', data, read(path.posix.join(path.posix.dirname(file), String(data.Filename))))
}

export function testCount(file: string): number {
  return (parse(read(file)).Tests as unknown[]).length
}

/**
 * A copy of the example tree plus, for each test i of `file`, a copy of the rule with id
 * `<id>.Flip<i>` whose test i expects the opposite (the other tests unchanged).
 */
export function treeWithFlips(file: string, edit?: (doc: YAML.Document) => void): string {
  const dir = tempDir('rk-pyexamples-')
  fs.cpSync(EXAMPLES, dir, { recursive: true })
  const text = read(file)
  const base = YAML.parseDocument(text, { version: '1.2' })
  if (edit) {
    edit(base)
    fs.writeFileSync(path.join(dir, file), base.toString())
  }
  const id = String(base.get('RuleID'))
  const n = (base.get('Tests') as YAML.YAMLSeq).items.length
  for (let i = 0; i < n; i++) {
    const doc = base.clone()
    doc.set('RuleID', `${id}.Flip${i}`)
    doc.setIn(['Tests', i, 'ExpectedResult'], !doc.getIn(['Tests', i, 'ExpectedResult']))
    fs.writeFileSync(path.join(dir, file.replace(/\.yml$/, `_flip${i}.yml`)), doc.toString())
  }
  return dir
}

function gitIn(cwd: string, args: string[]): string {
  return gitAs(PAT, cwd, ...args)
}

/** Commits the example files `rels` into the server's repository by hand, pushes and reconciles. */
export async function pushExamples(s: InProcessServer, rels: string[]): Promise<void> {
  const work = path.join(tempDir('rk-pyexamples-push-'), 'w')
  execFileSync('git', ['clone', '-q', s.gitdir, work])
  for (const rel of rels) {
    fs.mkdirSync(path.dirname(path.join(work, rel)), { recursive: true })
    fs.copyFileSync(path.join(EXAMPLES, rel), path.join(work, rel))
  }
  gitIn(work, ['add', '-A'])
  gitIn(work, ['commit', '-q', '-m', 'examples by hand'])
  gitIn(work, ['push', '-q', 'origin', 'HEAD:main'])
  const rec = await s.request('POST', '/reconcile')
  if (rec.status !== 200) throw new Error(rec.text)
}

export interface CliRule {
  id: string
  kind: string
  valid: boolean
  errors: unknown[]
  tests: Array<{
    name: string
    expected: boolean
    actual: boolean | null
    passed: boolean | null
    error: string | null
  }>
}
