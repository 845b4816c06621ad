// The configuration is checked whole: one error lists every problem of the file, the environment
// and the sections other modules own, each by key path; an unknown key at any depth is an error
// naming the nearest known key. `rulekeeper serve` prints that list and exits 1 without a trace.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { loadServiceConfig } from '../../src/config-sections.js'
import { editDistance, nearestKey } from '../../src/config/problems.js'
import { runCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/rulekeeper.js'

const ROOT = path.resolve(import.meta.dirname, '../..')

/** A config file with one mistake at every depth (the comment is line 1). */
const BAD = `# a team's first config
server:
  port: 70000
destination:
  - id: lost
destinations:
  - id: a
    type: webhook
    url: https://a.example/hook
  - id: b
    type: webhook
    url: https://b.example/hook
  - id: c
    type: webhook
    url: ftp://c.example/hook
    severity: [HIGH]
python:
  poolsize: 3
logSources:
  - id: editor-audit
    logType: Editor.Audit
    auth: { method: Bearer, tokenenv: RULEKEEPER_EDITOR_AUDIT_TOKEN }
detection:
  replay: { concurency: 2 }
delivery:
  atempts: 3
`

function writeConfig(text: string): string {
  const file = path.join(tempDir('rk-config-'), 'rulekeeper.yaml')
  fs.writeFileSync(file, text)
  return file
}

function messageOf(fn: () => unknown): string {
  try {
    fn()
  } catch (err) {
    return (err as Error).message
  }
  throw new Error('expected the configuration to be refused')
}

t.test('every problem of a file, at every depth, in one error with its key path and line', async (t) => {
  const file = writeConfig(BAD)
  const message = messageOf(() => loadServiceConfig({ RULEKEEPER_CONFIG: file }))
  t.same(message.split('\n'), [
    `invalid configuration: 9 problems (${file} layered over the defaults):`,
    `  server.port: must be <= 65535 (${file}:3)`,
    `  destination: unknown key; did you mean destinations? (${file}:4)`,
    `  destinations[2].url: must be an http(s) URL without credentials (put secrets in urlEnv) (${file}:15)`,
    `  destinations[2].severity: unknown key; did you mean severities? (${file}:16)`,
    `  python.poolsize: unknown key; did you mean poolSize? (${file}:18)`,
    `  logSources[0].auth.tokenenv: unknown key; did you mean tokenEnv? (${file}:22)`,
    `  logSources[0].auth.tokenEnv: must name an environment variable (${file}:22)`,
    `  detection.replay.concurency: unknown key; did you mean concurrency? (${file}:24)`,
    `  delivery.atempts: unknown key; did you mean attempts? (${file}:26)`,
  ])
})

t.test('unknown keys: the nearest known key, or the known keys when none is near', async (t) => {
  const problems = (over: unknown) =>
    messageOf(() => loadServiceConfig({}, over))
      .split('\n')
      .slice(1)
  t.same(problems({ datadir: './d', git: { remote: { timeout: 5 } }, api: { zzz: 1 } }), [
    '  datadir: unknown key; did you mean dataDir?',
    '  api.zzz: unknown key; known keys: basePath, maxBodyBytes, tokenReloadMs',
    '  git.remote.timeout: unknown key; did you mean timeoutMs?',
  ])
  t.same(problems({ audit: { limits: { maxRecord: 5 } }, server: { hots: 'x' } }), [
    '  server.hots: unknown key; did you mean host?',
    '  audit.limits.maxRecord: unknown key; did you mean maxRecords?',
  ])
  t.equal(editDistance('hots', 'host'), 1, 'two neighbours swapped are one edit')
  t.equal(editDistance('DataDir', 'datadir'), 0, 'case is ignored')
  t.equal(nearestKey('destination', ['delivery', 'destinations', 'detection']), 'destinations')
  t.equal(nearestKey('colour', ['server', 'api']), undefined)
})

t.test('a wrong value from a RULEKEEPER_* variable names the variable; the schema messages are plain', async (t) => {
  const message = messageOf(() =>
    loadServiceConfig(
      { RULEKEEPER_PORT: 'eighty', RULEKEEPER_LOG_LEVEL: 'loud', RULEKEEPER_BACKEND: 'oracle' },
      { git: { remote: { url: 5 } } },
    ),
  )
  t.same(message.split('\n'), [
    'invalid configuration: 4 problems:',
    '  server.port: must be an integer (from RULEKEEPER_PORT)',
    '  backend.kind: must be one of snowflake, databricks (from RULEKEEPER_BACKEND)',
    '  git.remote.url: must be a string or null',
    '  log.level: must be one of trace, debug, info, warn, error, fatal, silent (from RULEKEEPER_LOG_LEVEL)',
  ])
})

t.test('serve also lists the secrets a destination names and the environment lacks', async (t) => {
  const over = {
    destinations: [{ id: 'slack', type: 'slack', urlEnv: 'RK_TEST_UNSET_SLACK' }],
    server: { port: -1 },
  }
  t.same(
    messageOf(() => loadServiceConfig({}, over, { resolveSecrets: true }))
      .split('\n')
      .slice(1),
    [
      '  server.port: must be >= 0',
      '  destinations[0].urlEnv: the environment variable RK_TEST_UNSET_SLACK is not set',
    ],
  )
  t.same(
    messageOf(() => loadServiceConfig({}, over))
      .split('\n')
      .slice(1),
    ['  server.port: must be >= 0'],
    'the CLI reading a config for its data directory or destination ids needs no secrets',
  )
  t.doesNotThrow(() =>
    loadServiceConfig(
      { RK_TEST_UNSET_SLACK: 'https://hooks.slack.example/x' },
      { destinations: over.destinations },
      { resolveSecrets: true },
    ),
  )
})

t.test('rulekeeper serve prints every problem and exits 1, without a stack trace or a data directory', async (t) => {
  const file = writeConfig(BAD)
  const dataDir = path.join(tempDir('rk-config-serve-'), 'data')
  const r = await runCli(['serve'], { RULEKEEPER_CONFIG: file, RULEKEEPER_DATA_DIR: dataDir })
  t.equal(r.code, 1)
  t.equal(r.stdout, '')
  t.match(r.stderr, /^rulekeeper serve: invalid configuration: 9 problems \(/)
  t.match(r.stderr, /\n {2}destination: unknown key; did you mean destinations\?/)
  t.match(r.stderr, /\n {2}delivery\.atempts: unknown key; did you mean attempts\?/)
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace')
  t.notOk(fs.existsSync(dataDir), 'nothing was created')
})

/** The fenced YAML blocks of the docs that are service configuration (their first key is a config key). */
function docConfigs(): Array<{ where: string; text: string }> {
  const topKeys = Object.keys(loadServiceConfig({}))
  const pages = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).map((f) => `docs/${f}`)].filter((f) =>
    f.endsWith('.md'),
  )
  const out: Array<{ where: string; text: string }> = []
  for (const page of pages) {
    const text = fs.readFileSync(path.join(ROOT, page), 'utf8')
    for (const m of text.matchAll(/```ya?ml\n([\s\S]*?)```/g)) {
      const first = /^([A-Za-z]\w*):/m.exec(m[1]!)?.[1]
      if (first && topKeys.includes(first))
        out.push({ where: `${page}:${text.slice(0, m.index).split('\n').length}`, text: m[1]! })
    }
  }
  return out
}

t.test('valid configurations still load: the defaults and every configuration the docs show', async (t) => {
  const defaults = loadServiceConfig({})
  t.equal(defaults.server.port, 8080)
  const docs = docConfigs()
  t.ok(docs.length >= 2, 'the docs show configurations (log sources, destinations)')
  for (const { where, text } of docs)
    t.doesNotThrow(() => loadServiceConfig({ RULEKEEPER_CONFIG: writeConfig(text) }), `${where} loads`)
})
