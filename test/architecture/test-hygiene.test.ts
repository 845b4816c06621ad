// Test hygiene (issue 26, CONTRIBUTING "Write an API test"): (a) a test file that starts a real port
// says why in a `// Real port: <reason>` line near its top, the reason one of CONTRIBUTING's list;
// (b) no fixed sleep in test/: every wait on time (`setTimeout(r, …)` in a promise, `sleep(…)`)
// carries a `// wait: <why>` comment on its line or just above (a poll interval, or time is the point).
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const TEST = path.join(ROOT, 'test')
const SELF = fileURLToPath(import.meta.url)

/** What starts a port: the fixtures of test/helpers and the folders' own servers. */
const STARTS_PORT =
  /\b(?:startTestServer|startChild|startReceiver|startIngestServer|createGitHttpServer|remoteWorld|startTarget|startServer)\(|\bnew CrashServer\(|\.listen\(|\bcreateServer\(/
/** CONTRIBUTING's list of reasons for a real port. */
const REASONS = [
  'a crash',
  'a remote',
  'slow or hanging clients',
  'raw header bytes or lying lengths',
  'keep-alive',
  'the sockets or memory of a real server',
  'the memory of a real server',
  'a real client',
  'a second process',
]

const SLEEP = /setTimeout\(\s*\(?(?:r|resolve)\)?\s*,|(?:^|[^.\w])sleep\(/
const SLEEP_DEFINITION = /\bconst sleep\s*=/

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : files(p)
    return /\.(?:ts|js|mjs)$/.test(e.name) && p !== SELF ? [p] : []
  })
}

const rel = (p: string) => path.relative(ROOT, p).split(path.sep).join('/')

t.test('every test file that starts a real port names its reason from CONTRIBUTING', async (t) => {
  const missing: string[] = []
  let ports = 0
  for (const file of files(TEST)) {
    const name = rel(file)
    if (name.startsWith('test/helpers/')) continue
    const text = fs.readFileSync(file, 'utf8')
    if (!STARTS_PORT.test(text)) continue
    ports++
    const head = text.split('\n').slice(0, 30)
    const reason = head.find((l) => l.startsWith('// Real port: '))?.slice('// Real port: '.length)
    if (reason && REASONS.some((r) => reason.startsWith(r))) continue
    missing.push(reason ? `${name} (reason not in the list: ${reason})` : name)
  }
  t.ok(ports > 0, `the check sees the files that start a port (${ports})`)
  t.same(missing, [], 'a `// Real port: <reason>` line, or the file runs the service in process (startInProcess)')
})

t.test('no wait on a fixed time in test/ without its reason', async (t) => {
  const bare: string[] = []
  for (const file of files(TEST)) {
    const lines = fs.readFileSync(file, 'utf8').split('\n')
    lines.forEach((line, i) => {
      if (!SLEEP.test(line) || SLEEP_DEFINITION.test(line)) return
      if (line.includes('// wait:')) return
      // A reason in the comment lines just above.
      for (let j = i - 1; j >= 0 && /^\s*\/\//.test(lines[j]!); j--) if (lines[j]!.includes('// wait:')) return
      bare.push(`${rel(file)}:${i + 1}: ${line.trim()}`)
    })
  }
  t.same(bare, [], 'wait on a condition (waitFor of test/helpers/wait.ts), or say why time is the point (`// wait: …`)')
})
