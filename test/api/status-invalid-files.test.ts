// /status's invalid files are bounded and the whole list is paged (issue 27): after a push of 50,000
// invalid files /status answers the first 100 with their count and a cursor, in a small body, and
// GET /status/invalid-files walks every path exactly once, in byte order; a file's errors and each
// message are capped; bad cursors and limits are 400s; the route needs View Rules, as /status does.
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'
import { tempDir } from '../helpers/rulekeeper.js'

const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Pat',
  GIT_AUTHOR_EMAIL: 'pat@example.com',
  GIT_COMMITTER_NAME: 'Pat',
  GIT_COMMITTER_EMAIL: 'pat@example.com',
}

interface Entry {
  path: string
  ruleId: string | null
  errors: Array<{ message: string; line: number | null; column: number | null }>
}

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b))

/** One commit on main adding `paths`, every one the same invalid rule (one blob), with git fast-import. */
function pushInvalid(s: InProcessServer, paths: readonly string[]): string {
  const head = s.git('rev-parse', 'main').trim()
  const invalid = 'AnalysisType: rule\nSeverity: Nope\nDetection: []\n'
  const input = [
    `blob\nmark :1\ndata ${invalid.length}\n${invalid}\n`,
    `commit refs/heads/main\ncommitter Pat <pat@example.com> 1700000000 +0000\ndata 5\nbulk\nfrom ${head}\n`,
    ...paths.map((p) => `M 100644 :1 ${p}\n`),
  ].join('')
  const r = spawnSync('git', ['--git-dir', s.gitdir, 'fast-import', '--quiet'], { input, env })
  if (r.status !== 0) throw new Error(`fast-import: ${r.stderr}`)
  return s.git('rev-parse', 'main').trim()
}

/** Every page of GET /status/invalid-files from the first, with its page size. */
async function walk(s: InProcessServer, limit: number, from?: string): Promise<{ entries: Entry[]; pages: number }> {
  const entries: Entry[] = []
  let cursor: string | null | undefined = from
  let pages = 0
  do {
    const q = new URLSearchParams({ limit: String(limit), ...(cursor ? { cursor } : {}) })
    const r = await s.request('GET', `/status/invalid-files?${q}`)
    if (r.status !== 200) throw new Error(`page ${pages}: ${r.status} ${r.text}`)
    t.ok(r.body.results.length <= limit, 'a page holds at most limit entries')
    entries.push(...r.body.results)
    cursor = r.body.next
    pages++
  } while (cursor)
  return { entries, pages }
}

t.test('50,000 invalid files: /status lists 100 with the count and a cursor; the route pages them all', async (t) => {
  t.setTimeout(300_000)
  const s = await startInProcess()
  t.teardown(() => s.close())
  const n = 50_000
  // Two names whose UTF-16 order and byte order differ (U+1F600 is before U+FF5E in UTF-16, after it in UTF-8).
  const paths = [
    ...Array.from({ length: n - 2 }, (_, i) => `simple_rules/bulk/b${i % 50}/f${i}.yml`),
    'simple_rules/bulk/\u{1F600}.yml',
    'simple_rules/bulk/\uFF5E.yml',
  ]
  const tip = pushInvalid(s, paths)
  const rec = await s.request('POST', '/reconcile')
  t.equal(rec.status, 200)
  t.equal(rec.body.lastAppliedRevision, tip, 'the push is applied')
  t.equal(rec.body.invalidFileCount, n, '/reconcile counts them')
  t.equal(rec.body.invalidFiles.length, 100, '/reconcile lists 100')

  const expected = [...paths].sort(byteOrder)
  const started = performance.now()
  const st = await s.request('GET', '/status')
  const firstMs = performance.now() - started
  t.equal(st.status, 200)
  const bytes = Buffer.byteLength(st.text)
  t.ok(bytes < 200 * 1024, `the /status body is ${(bytes / 1024).toFixed(1)} KiB`)
  t.equal(st.body.invalidFileCount, n, 'the count is the total')
  t.equal(st.body.files.invalid, n, 'the accounting agrees')
  const listed = st.body.invalidFiles as Entry[]
  t.same(
    listed.map((f) => f.path),
    expected.slice(0, 100),
    'the first 100 paths, in byte order',
  )
  t.same(Object.keys(listed[0]!).sort(), ['errors', 'path', 'ruleId'], 'each entry keeps its shape')
  t.match(listed[0]!.errors[0]!.message, /RuleID is required/, 'with its errors')
  t.type(st.body.invalidFilesNext, 'string', 'a cursor says the list goes on')

  // The list is kept per revision: later calls slice it, they do not rebuild or serialize it all.
  const again = performance.now()
  for (let i = 0; i < 10; i++) await s.request('GET', '/status')
  t.comment(
    `GET /status: ${bytes} bytes; first ${firstMs.toFixed(0)} ms, then ${((performance.now() - again) / 10).toFixed(1)} ms each`,
  )

  // From /status's cursor the route continues where /status stopped.
  const rest = await walk(s, 1000, st.body.invalidFilesNext)
  t.same(
    [...listed, ...rest.entries].map((f) => f.path),
    expected,
    'status + pages: every path once, in order',
  )
  // From the start, in pages of 1,000: 50 pages.
  const all = await walk(s, 1000)
  t.equal(all.pages, n / 1000, 'full pages, no empty last page')
  t.same(
    all.entries.map((f) => f.path),
    expected,
    'every path exactly once, in byte order',
  )
  t.ok(
    all.entries.every((e) => e.errors.length > 0 && e.ruleId === null),
    'each with its errors',
  )
  const first = await s.request('GET', '/status/invalid-files')
  t.equal(first.body.results.length, 100, 'the default page size is 100')
})

t.test('a few invalid files: /status lists them whole, with no cursor', async (t) => {
  t.setTimeout(120_000)
  const s = await startInProcess()
  t.teardown(() => s.close())
  pushInvalid(s, ['simple_rules/x/b.yml', 'simple_rules/x/a.yml'])
  const st = (await s.request('POST', '/reconcile')).body
  t.same(
    (st.invalidFiles as Entry[]).map((f) => f.path),
    ['simple_rules/x/a.yml', 'simple_rules/x/b.yml'],
  )
  t.equal(st.invalidFileCount, 2)
  t.equal(st.invalidFilesNext, null, 'the list is whole')
  const page = await s.request('GET', '/status/invalid-files?limit=1')
  t.same(
    page.body.results.map((f: Entry) => f.path),
    ['simple_rules/x/a.yml'],
  )
  const next = await s.request('GET', `/status/invalid-files?limit=1&cursor=${page.body.next}`)
  t.same(
    next.body.results.map((f: Entry) => f.path),
    ['simple_rules/x/b.yml'],
  )
  t.equal(next.body.next, null, 'the last page has no next')
  t.same(next.body.results[0], st.invalidFiles[1], 'the route and /status list an entry alike')
})

t.test('paths too long for a cursor are paged by prefix and digest, none repeated or skipped', async (t) => {
  t.setTimeout(120_000)
  const s = await startInProcess()
  t.teardown(() => s.close())
  // Six paths of ~3,000 bytes sharing their first 2,900 (a cursor naming one whole would be refused).
  const deep = `simple_rules/${Array.from({ length: 12 }, () => 'd'.repeat(240)).join('/')}`
  const long = ['a', 'b', 'c', 'd', 'e', 'f'].map((x) => `${deep}/${x.repeat(100)}.yml`)
  const paths = ['simple_rules/short/a.yml', ...long, 'simple_rules/zz.yml']
  pushInvalid(s, paths)
  t.equal((await s.request('POST', '/reconcile')).body.invalidFileCount, paths.length)
  const { entries, pages } = await walk(s, 1)
  t.equal(pages, paths.length, 'one page per file')
  t.same(
    entries.map((e) => e.path),
    [...paths].sort(byteOrder),
    'every path once, in order',
  )
  // A long path fixed during the walk: the walk goes on from the paths sharing its prefix (repeats, never skips).
  const r1 = await s.request('GET', '/status/invalid-files?limit=2')
  t.ok(r1.body.results.at(-1).path === long[1], 'the first page ends at a long path')
  const head = s.git('rev-parse', 'main').trim()
  const input = `commit refs/heads/main\ncommitter Pat <pat@example.com> 1700000001 +0000\ndata 3\nfix\nfrom ${head}\nD ${long[1]}\n`
  t.equal(spawnSync('git', ['--git-dir', s.gitdir, 'fast-import', '--quiet'], { input, env }).status, 0)
  t.equal((await s.request('POST', '/reconcile')).body.invalidFileCount, paths.length - 1)
  const rest = await walk(s, 100, r1.body.next)
  t.same(
    rest.entries.map((e) => e.path),
    [long[0], ...long.slice(2), 'simple_rules/short/a.yml', 'simple_rules/zz.yml'],
    'from the first path sharing its prefix: one listed again, nothing skipped',
  )
})

t.test("a file's errors and each message are capped", async (t) => {
  t.setTimeout(120_000)
  const s = await startInProcess()
  t.teardown(() => s.close())
  const dir = path.join(tempDir('rk-status-caps-'), 'w')
  execFileSync('git', ['clone', '-q', s.gitdir, dir])
  // 40 conditions with an unknown operator: 40 errors in one file.
  const conditions = Array.from({ length: 40 }, (_, i) => `  - KeyPath: f${i}\n    Condition: NoSuchOperator\n`).join(
    '',
  )
  fs.writeFileSync(
    path.join(dir, 'simple_rules/Many.yml'),
    `AnalysisType: rule\nRuleID: Many.Errors\nEnabled: true\nSeverity: Low\nLogTypes:\n  - AWS.CloudTrail\nDetection:\n${conditions}`,
  )
  // An unknown AnalysisType of 5,000 characters, quoted in its message.
  fs.writeFileSync(path.join(dir, 'simple_rules/Long.yml'), `AnalysisType: ${'x'.repeat(5000)}\nRuleID: Long.Message\n`)
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, env, encoding: 'utf8' })
  git('add', '-A')
  git('commit', '-q', '-m', 'bad files')
  git('push', '-q', 'origin', 'HEAD:main')
  const st = (await s.request('POST', '/reconcile')).body
  const byPath = new Map((st.invalidFiles as Entry[]).map((f) => [f.path, f]))
  const many = byPath.get('simple_rules/Many.yml')
  t.equal(many?.errors.length, 20, 'at most 20 errors listed')
  t.match(many?.errors[19]?.message, /^\d+ more errors not listed \(limit 20\)/, 'the last one counts the rest')
  t.same(
    many?.errors.slice(0, 19).map((e) => e.message.includes('NoSuchOperator')),
    Array(19).fill(true),
  )
  const long = byPath.get('simple_rules/Long.yml')
  t.match(long?.errors[0]?.message, /^unknown AnalysisType "xxx/)
  t.ok(
    (long?.errors[0]?.message.length ?? Infinity) <= 500,
    `the message is ${long?.errors[0]?.message.length} characters`,
  )
  t.match(long?.errors[0]?.message, /\.\.\. \(truncated\)$/, 'and says it was cut')
  const page = (await s.request('GET', '/status/invalid-files')).body.results as Entry[]
  t.same(
    page.find((f) => f.path === 'simple_rules/Many.yml'),
    many,
    'the route lists the same capped entry',
  )
})

t.test('bad cursors and limits are 400s with a message; the route needs View Rules like /status', async (t) => {
  t.setTimeout(120_000)
  const s = await startInProcess()
  t.teardown(() => s.close())
  const ruleListCursor = Buffer.from(JSON.stringify({ k: 'simple', a: 'x' })).toString('base64url')
  const bad: Array<[string, string]> = [
    ['cursor=not-a-cursor!', 'not base64url'],
    [`cursor=${Buffer.from('{"k":"invalid-files"}').toString('base64url')}`, 'no position'],
    [`cursor=${ruleListCursor}`, "a rule list's cursor"],
    ['limit=0', 'limit 0'],
    ['limit=1001', 'limit over 1000'],
    ['limit=ten', 'limit not a number'],
    ['page=2', 'an unknown parameter'],
    ['cursor=a&cursor=b', 'a cursor given twice'],
  ]
  for (const [q, why] of bad) {
    const r = await s.request('GET', `/status/invalid-files?${q}`)
    t.equal(r.status, 400, `${why}: 400`)
    t.equal(r.body.code, 'BadRequest', why)
    t.match(r.body.message, /cursor|limit|parameter/, `${why}: ${r.body.message}`)
  }
  t.match(
    (await s.request('GET', `/status/invalid-files?cursor=${ruleListCursor}`)).body.message,
    /cursor is not valid/,
  )

  const alerts = await s.makeToken('status-alerts-only', ['View Alerts'])
  const viewer = await s.makeToken('status-viewer', ['View Rules'])
  for (const p of ['/status', '/status/invalid-files']) {
    t.equal((await s.send('GET', p)).status, 401, `${p} without a token: 401`)
    t.equal((await s.send('GET', p, undefined, { 'X-API-Key': alerts })).status, 403, `${p} without View Rules: 403`)
    t.equal((await s.send('GET', p, undefined, { 'X-API-Key': viewer })).status, 200, `${p} with View Rules: 200`)
  }
})
