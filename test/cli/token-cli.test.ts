// `rulekeeper token` defects of issue 13: `create --json` is one parseable JSON document (the secret
// a field of it), and run where the server's data directory is not, the command refuses instead of
// creating a ./data/tokens.json the server never reads — unless the directory is named explicitly.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { runCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/rulekeeper.js'

const NO_DIR = { RULEKEEPER_DATA_DIR: '', RULEKEEPER_CONFIG: '' }

t.test('token create --json prints one JSON document holding the secret', async (t) => {
  const dataDir = tempDir('rk-token-json-')
  const r = await runCli(['token', 'create', '--name', 'ci', '--permissions', 'ViewRules', '--json'], {
    RULEKEEPER_DATA_DIR: dataDir,
  })
  t.equal(r.code, 0, r.stderr)
  const doc = JSON.parse(r.stdout)
  t.match(doc, { id: /^tok_/, name: 'ci', permissions: ['View Rules'], secret: /^rk_\w+_[\w-]+$/ })
  t.notMatch(fs.readFileSync(path.join(dataDir, 'tokens.json'), 'utf8'), doc.secret, 'only its hash is stored')
  const human = await runCli(['token', 'create', '--name', 'cd', '--permissions', 'ViewRules'], {
    RULEKEEPER_DATA_DIR: dataDir,
  })
  t.match(
    human.stdout.trimEnd().split('\n').pop(),
    /^rk_\w+_[\w-]+$/,
    'without --json the secret is alone on the last line',
  )
})

t.test('in a folder without the data directory, token commands refuse and create nothing', async (t) => {
  const cwd = tempDir('rk-token-cwd-')
  for (const args of [['create', '--name', 'ci', '--permissions', 'ViewRules'], ['list'], ['revoke', 'tok_x']]) {
    const r = await runCli(['token', ...args], NO_DIR, cwd)
    t.equal(r.code, 1, args[0]!)
    t.match(r.stderr, /no data directory at .*data .*--data-dir DIR or RULEKEEPER_DATA_DIR/, args[0]!)
  }
  t.notOk(fs.existsSync(path.join(cwd, 'data')), 'no ./data was created')
  t.equal(
    (await runCli(['token', 'create', '--name', 'x', '--permissions', 'Everything'], NO_DIR, cwd)).code,
    2,
    'usage first',
  )

  // Named explicitly (flag, variable or config file), or already there: it is used.
  const named = path.join(cwd, 'elsewhere')
  t.equal(
    (await runCli(['token', 'create', '--name', 'a', '--permissions', 'ViewRules', '--data-dir', named], NO_DIR, cwd))
      .code,
    0,
  )
  t.ok(fs.existsSync(path.join(named, 'tokens.json')))
  const config = path.join(cwd, 'rk.yaml')
  fs.writeFileSync(config, `dataDir: ${path.join(cwd, 'configured')}\n`)
  t.equal(
    (
      await runCli(
        ['token', 'create', '--name', 'b', '--permissions', 'ViewRules'],
        { ...NO_DIR, RULEKEEPER_CONFIG: config },
        cwd,
      )
    ).code,
    0,
  )
  t.ok(fs.existsSync(path.join(cwd, 'configured/tokens.json')), 'the config file names it, as for the server')
  fs.mkdirSync(path.join(cwd, 'data'))
  t.equal((await runCli(['token', 'list', '--json'], NO_DIR, cwd)).code, 0, "an existing ./data is the server's")
})
