// detections.md §5.1: every YAML file of a tree is accounted for (valid, invalid, unsupported) by
// `validate`/`test` (--json `files` and counts, human lists and counts, exit codes), and a server
// serving the same tree reports the same counts and the same invalid files in /status.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { runCli } from '../helpers/cli.js'
import { startInProcess } from '../helpers/in-process.js'
import { tempDir } from '../helpers/rulekeeper.js'
import { gitAs } from '../helpers/git-as.js'

const TEMPLATE = path.resolve(import.meta.dirname, '../../rules-repo-template')

/** The template plus one file of every other analysis type, the broken files of issue 13 and non-analysis YAML. */
function everyKindTree(): string {
  const dir = tempDir('rk-accounting-')
  fs.cpSync(TEMPLATE, dir, { recursive: true })
  const put = (p: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true })
    fs.writeFileSync(path.join(dir, p), text)
  }
  put(
    'policies/s3.yml',
    'AnalysisType: policy\nPolicyID: AWS.S3.Public\nFilename: s3.py\nEnabled: true\nSeverity: High\nResourceTypes: [AWS.S3.Bucket]\n',
  )
  put('policies/s3.py', 'def policy(resource):\n    return True\n')
  // A policy with a rule's alert grouping key: panther_analysis_tool's policy schema has none.
  put(
    'policies/bad.yml',
    'AnalysisType: policy\nPolicyID: AWS.S3.Bad\nFilename: s3.py\nEnabled: true\nSeverity: High\nThreshold: 5\n',
  )
  put(
    'data_models/ct.yml',
    'AnalysisType: datamodel\nDataModelID: Standard.CT\nLogTypes: [AWS.CloudTrail]\nEnabled: true\nMappings:\n  - Name: actor\n    Path: userIdentity.arn\n',
  )
  // A data model with a Method and no Filename: invalid, the problem located.
  put(
    'data_models/bad.yml',
    'AnalysisType: datamodel\nDataModelID: Standard.Bad\nLogTypes: [X]\nEnabled: true\nMappings:\n  - Name: actor\n    Method: get_actor\n',
  )
  put('packs/aws.yml', 'AnalysisType: pack\nPackID: Managed.AWS\nPackDefinition:\n  IDs: [AWS.S3.Public]\n')
  put('lookup_tables/ips.yml', 'AnalysisType: lookup_table\nLookupName: ips\nEnabled: true\n')
  put('queries/saved.yml', 'AnalysisType: saved_query\nQueryName: Saved.One\nQuery: select 1\n')
  put('rules/derived.yml', 'AnalysisType: derived\nRuleID: Derived.One\nBaseDetection: Editor.Audit.LoginFailed\n')
  put(
    'rules/py_rule.yml',
    'AnalysisType: rule\nRuleID: Python.One\nFilename: py_rule.py\nEnabled: true\nLogTypes: [X]\nSeverity: Low\n',
  )
  put('rules/py_rule.py', 'def rule(event):\n    return True\n')
  // Issue 13: a YAML syntax error, a mistyped AnalysisType, an analysis file without one.
  put('rules/broken.yml', 'AnalysisType: rule\nRuleID: "Broken\n  x: [\n')
  put('rules/typo.yml', 'AnalysisType: rul\nRuleID: Typo.One\nSeverity: High\n')
  put('rules/untyped.yml', 'RuleID: Untyped.One\nSeverity: High\n')
  put('rules/neither.yml', 'AnalysisType: rule\nRuleID: Neither.One\nEnabled: true\nSeverity: Low\n')
  // Not analysis files: reported, never counted as something to check.
  put('docs/mkdocs.yml', 'site_name: rules\n')
  put('.pre-commit-config.yaml', 'repos: []\n')
  // Skipped folders: never read.
  put('.github/workflows/ci.yml', 'AnalysisType: rul\n')
  put('rules/__pycache__/x.yml', 'AnalysisType: rul\n')
  put('node_modules/pkg/x.yml', 'AnalysisType: rul\n')
  return dir
}

interface FileEntry {
  path: string
  status: string
  analysisType: string | null
  id: string | null
  problems: Array<{ message: string; line: number | null; column: number | null }>
  reason: string | null
}

t.test('validate --json lists every YAML file with its status, and counts them', async (t) => {
  const dir = everyKindTree()
  const r = await runCli(['validate', dir, '--json'])
  t.equal(r.code, 1, 'invalid files make the exit code 1')
  const report = JSON.parse(r.stdout)
  const files = new Map((report.files as FileEntry[]).map((f) => [f.path, f]))
  t.same(
    [...files.keys()].filter((p) => /^(\.github|node_modules)|__pycache__/.test(p)),
    [],
    'hidden folders, __pycache__ and node_modules are not read',
  )
  const status = (p: string) => files.get(p)?.status
  for (const p of [
    'simple_rules/editor/Editor.Audit.LoginFailed.yml',
    'scheduled_rules/editor/Editor.Audit.AdminGrantsBurst.yml',
    'correlation_rules/editor/Editor.Audit.BruteForceThenSuccess.yml',
    'rules/py_rule.yml',
    'data_models/ct.yml',
    'policies/s3.yml',
  ])
    t.equal(status(p), 'valid', p)
  t.match(files.get('data_models/ct.yml')!, { analysisType: 'datamodel', id: 'Standard.CT', reason: null })
  t.match(files.get('data_models/bad.yml')!, {
    status: 'invalid',
    id: 'Standard.Bad',
    problems: [{ message: /Method 'get_actor' needs the data model's Filename/, line: 7, column: 5 }],
  })
  for (const p of [
    'packs/aws.yml',
    'lookup_tables/ips.yml',
    'global_helpers/editor_helpers.yml',
    'rules/derived.yml',
    'docs/mkdocs.yml',
    '.pre-commit-config.yaml',
  ]) {
    t.equal(status(p), 'unsupported', p)
    t.type(files.get(p)!.reason, 'string', `${p} says why`)
  }
  // Queries are served (/queries/saved, /queries/scheduled), their SQL bound by DuckDB.
  t.match(files.get('queries/saved.yml')!, { status: 'valid', analysisType: 'saved_query', id: 'Saved.One' })
  t.match(files.get('queries/editor_admin_grants_hourly.yml')!, {
    status: 'valid',
    analysisType: 'scheduled_query',
    id: 'Editor.Audit.AdminGrants.Hourly',
  })
  t.match(files.get('rules/py_rule.yml')!, { analysisType: 'rule', id: 'Python.One', reason: null })
  t.match(files.get('policies/s3.yml')!, { analysisType: 'policy', id: 'AWS.S3.Public', reason: null })
  t.match(files.get('policies/bad.yml')!, {
    status: 'invalid',
    id: 'AWS.S3.Bad',
    problems: [{ message: /unknown key Threshold/, line: 6, column: 1 }],
  })
  t.match(files.get('docs/mkdocs.yml')!, { analysisType: null, reason: /not an analysis file/ })

  t.match(files.get('rules/broken.yml')!, { status: 'invalid', problems: [{ line: Number, column: Number }] })
  t.match(files.get('rules/typo.yml')!, {
    status: 'invalid',
    id: 'Typo.One',
    problems: [{ message: /unknown AnalysisType "rul"/, line: 1, column: 1 }],
  })
  t.match(files.get('rules/untyped.yml')!, { status: 'invalid', problems: [{ message: /AnalysisType is missing/ }] })
  t.match(files.get('rules/neither.yml')!, { status: 'invalid', problems: [{ message: /Detection .* or Filename/ }] })

  const counted = { valid: 0, invalid: 0, unsupported: 0 } as Record<string, number>
  for (const f of files.values()) counted[f.status]!++
  t.match(report.summary, { files: files.size, ...counted, rules: 10 })
  t.same([counted.valid, counted.invalid, counted.unsupported], [10, 6, 6])
})

t.test('human output lists every invalid and unsupported file and ends with the counts', async (t) => {
  const dir = everyKindTree()
  const r = await runCli(['validate', dir])
  t.equal(r.code, 1)
  t.match(r.stdout, /\[INVALID\] rules\/typo\.yml \(Typo\.One\)\n {4}rules\/typo\.yml:1:1 unknown AnalysisType/)
  t.match(r.stdout, /\[INVALID\] rules\/broken\.yml\n {4}rules\/broken\.yml:\d+:\d+ /)
  t.match(r.stdout, /\[INVALID\] policies\/bad\.yml \(AWS\.S3\.Bad\)\n {4}policies\/bad\.yml:6:1 unknown key Threshold/)
  t.notMatch(r.stdout, /UNSUPPORTED\] policies/, 'policies are served')
  t.match(r.stdout, /\[UNSUPPORTED\] docs\/mkdocs\.yml: not an analysis file/)
  t.notMatch(r.stdout, /null/, 'no location or field prints as null')
  const lines = r.stdout.trimEnd().split('\n')
  t.same(lines.slice(-2), ['22 files: 10 valid, 6 invalid, 6 unsupported', '10 rules'])
})

t.test('the template validates: its query is valid, its helper unsupported, nothing is invalid', async (t) => {
  const r = await runCli(['validate', TEMPLATE])
  t.equal(r.code, 0, r.stdout + r.stderr)
  t.same(r.stdout.trimEnd().split('\n').slice(-2), ['7 files: 6 valid, 0 invalid, 1 unsupported', '6 rules'])
})

t.test('a folder with no analysis file is "nothing to check": exit 1', async (t) => {
  const empty = tempDir('rk-empty-')
  const r = await runCli(['validate', empty, '--json'])
  t.equal(r.code, 1)
  t.match(JSON.parse(r.stdout).summary, { files: 0, rules: 0 })
  t.match(r.stderr, /nothing to check/)
  const docs = tempDir('rk-docs-')
  fs.writeFileSync(path.join(docs, 'mkdocs.yml'), 'site_name: x\n')
  const d = await runCli(['test', docs])
  t.equal(d.code, 1, 'only non-analysis YAML: still nothing to check')
  t.match(d.stderr, /nothing to check/)
})

t.test('the CLI and a server serving the same tree report the same accounting', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const work = path.join(tempDir('rk-same-'), 'w')
  const git = (...args: string[]) => gitAs({ name: 'P', email: 'p@x' }, work, ...args)
  execFileSync('git', ['clone', '-q', s.gitdir, work])
  const tree = everyKindTree()
  for (const dir of ['.github', 'node_modules']) fs.rmSync(path.join(tree, dir), { recursive: true })
  fs.rmSync(path.join(tree, 'rules/__pycache__'), { recursive: true })
  fs.cpSync(tree, work, { recursive: true })
  git('add', '-A')
  git('commit', '-q', '-m', 'every kind of file')
  git('push', '-q', 'origin', 'HEAD:main')
  const status = (await s.request('POST', '/reconcile')).body
  t.equal(status.lastAppliedRevision, git('rev-parse', 'HEAD').trim())

  const cli = JSON.parse((await runCli(['validate', work, '--json'])).stdout)
  const { files, valid, invalid, unsupported } = cli.summary
  t.match(status.files, { files, valid, invalid, unsupported }, 'the same counts')
  t.same(
    (status.invalidFiles as Array<{ path: string }>).map((f) => f.path),
    (cli.files as FileEntry[]).filter((f) => f.status === 'invalid').map((f) => f.path),
    'the same invalid files',
  )
  t.equal(status.files.invalid, 6)
})
