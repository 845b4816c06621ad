// What adopting an existing repository costs (docs/existing-repository.md): a repository the size of
// a team's Panther fork — ~1,000 Python rules with their tests, global helpers and data models
// (bench/python-rules.bench.ts writes them), and a history of one commit per rule plus edits — then
// timed end to end, each step the real CLI in a child process from the sources (as the CLI tests):
// `init --from`, the first and the second start on it, a first start following it as a local
// remote, `validate` and `test` over its checkout.
// Run: npx tsx bench/existing-repository.ts [--rules 1000] [--edits 300] [--keep]
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { writeRepository } from './python-rules.bench.js'

const ROOT = path.resolve(import.meta.dirname, '..')
const CLI_ENTRY = path.join(ROOT, 'test', 'helpers', 'cli-entry.ts')
const TSX = import.meta.resolve('tsx')
const PEOPLE = ['Ana', 'Ben', 'Cy', 'Dee', 'Eli', 'Fay', 'Gus', 'Hal']

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? Number(process.argv[i + 1]) : fallback
}

interface Run {
  code: number | null
  stdout: string
  stderr: string
  seconds: number
}

function run(args: string[], env: NodeJS.ProcessEnv = {}, cwd = ROOT, input?: Buffer): Promise<Run> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const [cmd, ...rest] = args
    const child = spawn(cmd!, rest, { cwd, env: { ...process.env, NO_COLOR: '1', ...env } })
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout.on('data', (d: Buffer) => out.push(d))
    child.stderr.on('data', (d: Buffer) => err.push(d))
    child.on('error', reject)
    child.on('close', (code) =>
      resolve({
        code,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        seconds: (performance.now() - started) / 1000,
      }),
    )
    child.stdin.end(input)
  })
}

const cli = (args: string[], env: NodeJS.ProcessEnv = {}, cwd = ROOT) =>
  run([process.execPath, '--import', TSX, CLI_ENTRY, ...args], env, cwd)

function must(r: Run, what: string): Run {
  if (r.code !== 0) throw new Error(`${what}: exit ${r.code}\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`)
  return r
}

/** Every file under `dir` (no .git), as repository paths. */
function filesUnder(dir: string, rel = ''): string[] {
  return fs.readdirSync(path.join(dir, rel), { withFileTypes: true }).flatMap((e) => {
    if (e.name === '.git') return []
    const r = rel ? `${rel}/${e.name}` : e.name
    return e.isDirectory() ? filesUnder(dir, r) : [r]
  })
}

/** A history for the files written in `dir`: helpers and data models, one commit per rule, then edits. */
async function commitHistory(dir: string, edits: number): Promise<number> {
  must(await run(['git', 'init', '-q', '-b', 'main'], {}, dir), 'git init')
  const files = filesUnder(dir)
  const byRule = new Map<string, string[]>()
  const shared: string[] = []
  for (const f of files) {
    if (!f.startsWith('rules/')) shared.push(f)
    else {
      const stem = f.replace(/\.(yml|py)$/, '')
      byRule.set(stem, [...(byRule.get(stem) ?? []), f])
    }
  }
  const chunks: Buffer[] = []
  let mark = 0
  let time = Date.UTC(2022, 0, 1) / 1000
  const commit = (message: string, changes: Array<[string, Buffer]>) => {
    const who = PEOPLE[mark % PEOPLE.length]!
    const person = `${who} <${who.toLowerCase()}@example.com> ${time} +0000`
    time += 3600 * 7
    const msg = Buffer.from(`${message}\n`)
    chunks.push(Buffer.from(`commit refs/heads/main\nmark :${++mark}\nauthor ${person}\ncommitter ${person}\n`))
    chunks.push(Buffer.from(`data ${msg.length}\n`), msg)
    if (mark > 1) chunks.push(Buffer.from(`from :${mark - 1}\n`))
    for (const [p, content] of changes)
      chunks.push(Buffer.from(`M 100644 inline ${p}\ndata ${content.length}\n`), content, Buffer.from('\n'))
  }
  const read = (p: string) => fs.readFileSync(path.join(dir, p))
  commit(
    'Add global helpers and data models',
    shared.map((p) => [p, read(p)]),
  )
  const stems = [...byRule.keys()]
  for (const stem of stems)
    commit(
      `Add ${path.basename(stem)}`,
      byRule.get(stem)!.map((p) => [p, read(p)]),
    )
  for (let i = 0; i < edits; i++) {
    const py = byRule.get(stems[(i * 7) % stems.length]!)!.find((p) => p.endsWith('.py'))!
    const edited = Buffer.concat([read(py), Buffer.from(`# tuned in change ${i}\n`)])
    fs.writeFileSync(path.join(dir, py), edited)
    commit(`Tune ${path.basename(py, '.py')}`, [[py, edited]])
  }
  must(await run(['git', 'fast-import', '--quiet'], {}, dir, Buffer.concat(chunks)), 'git fast-import')
  must(await run(['git', 'reset', '-q', '--hard', 'main'], {}, dir), 'git reset')
  return mark
}

/** Starts `rulekeeper serve` on `dataDir`; resolves with its start-up line once it serves, then stops it. */
async function serveOnce(env: NodeJS.ProcessEnv): Promise<{ seconds: number; startMs: number; rules: number }> {
  const started = performance.now()
  const child = spawn(process.execPath, ['--import', TSX, CLI_ENTRY, 'serve', '--json'], {
    cwd: ROOT,
    env: { ...process.env, RULEKEEPER_PORT: '0', ...env },
  })
  let err = ''
  child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')))
  const line = await new Promise<Record<string, number>>((resolve, reject) => {
    let buf = ''
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString('utf8')
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        const rec = JSON.parse(buf.slice(0, i)) as Record<string, unknown>
        buf = buf.slice(i + 1)
        if (rec.msg === 'rulekeeper is serving') resolve(rec as Record<string, number>)
      }
    })
    child.on('close', (code) => reject(new Error(`serve exited with ${code}: ${err.slice(-2000)}`)))
  })
  const seconds = (performance.now() - started) / 1000
  const closed = new Promise((r) => child.once('close', r))
  child.kill('SIGTERM')
  await closed
  return { seconds, startMs: line.startMs!, rules: line.rules! }
}

async function main(): Promise<void> {
  const rules = option('rules', 1000)
  const edits = option('edits', 300)
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rk-adopt-'))
  const fork = path.join(tmp, 'panther-analysis')
  const say = (s: string) => process.stderr.write(`${s}\n`)
  try {
    const specs = writeRepository(fork, rules)
    const tests = specs.reduce((a, s) => a + s.tests.length, 0)
    const commits = await commitHistory(fork, edits)
    const size = must(await run(['git', 'count-objects', '-vH'], {}, fork), 'count-objects').stdout
    say(`repository: ${rules} Python rules, ${tests} tests, ${commits} commits, ${filesUnder(fork).length} files`)
    say(size.trim().replace(/\n/g, '; '))

    const data = path.join(tmp, 'data')
    const init = must(await cli(['init', '--from', fork, '--data-dir', data]), 'init --from')
    say(`init --from (path):           ${init.seconds.toFixed(2)} s`)
    const first = await serveOnce({ RULEKEEPER_DATA_DIR: data })
    say(
      `first start (embedded):       ${first.seconds.toFixed(2)} s to serving, startMs ${first.startMs}, ${first.rules} rules`,
    )
    const second = await serveOnce({ RULEKEEPER_DATA_DIR: data })
    say(`second start (embedded):      ${second.seconds.toFixed(2)} s to serving, startMs ${second.startMs}`)

    const bare = path.join(tmp, 'panther-analysis.git')
    must(await run(['git', 'clone', '-q', '--bare', fork, bare]), 'clone --bare')
    const remoteFirst = await serveOnce({
      RULEKEEPER_DATA_DIR: path.join(tmp, 'data-remote'),
      RULEKEEPER_GIT_URL: bare,
    })
    say(
      `first start (remote: path):   ${remoteFirst.seconds.toFixed(2)} s to serving, startMs ${remoteFirst.startMs}, ${remoteFirst.rules} rules`,
    )

    const validate = await cli(['validate', fork, '--json'])
    say(`rulekeeper validate:          ${validate.seconds.toFixed(2)} s (exit ${validate.code})`)
    const test = await cli(['test', fork, '--json'])
    const summary = (JSON.parse(test.stdout || '{}') as { summary?: Record<string, number> }).summary
    say(`rulekeeper test:              ${test.seconds.toFixed(2)} s (exit ${test.code}) ${JSON.stringify(summary)}`)
    say(
      `load average ${os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join('/')}, ${os.cpus().length} cores`,
    )
  } finally {
    if (!process.argv.includes('--keep')) fs.rmSync(tmp, { recursive: true, force: true })
    else say(`kept ${tmp}`)
  }
}

await main()
