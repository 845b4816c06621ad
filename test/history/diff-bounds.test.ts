// GET /K/{id}/diff is bounded (issue 27, finding 3): a diff of thousands of changed lines is made
// in linear space off the event loop (the quadratic one took 0.8–1.6 s and ~500 MB at 4,000 lines,
// and ran out of memory at 40,000), and inputs over the diff's bounds answer 413 with a message.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { startInProcess, type InProcessServer } from '../helpers/in-process.js'
import { PAT, gitAs } from '../helpers/git-as.js'
import { tempDir } from '../helpers/rulekeeper.js'

const HEAD =
  'AnalysisType: rule\nRuleID: Big.Diff\nEnabled: true\nSeverity: Low\nLogTypes: [AWS.CloudTrail]\n' +
  'Detection:\n  - KeyPath: a\n    Condition: Equals\n    Value: b\n'

/** Pushes each text in turn as the rule's file (plain git) and returns the commit of each. */
async function pushVersions(s: InProcessServer, texts: string[]): Promise<string[]> {
  const work = path.join(tempDir('rk-diff-'), 'w')
  execFileSync('git', ['clone', '-q', s.gitdir, work])
  fs.mkdirSync(path.join(work, 'simple_rules'), { recursive: true })
  const revs: string[] = []
  for (const [i, text] of texts.entries()) {
    fs.writeFileSync(path.join(work, 'simple_rules/Big.Diff.yml'), text)
    gitAs(PAT, work, 'add', '-A')
    gitAs(PAT, work, 'commit', '-q', '-m', `version ${i}`)
    gitAs(PAT, work, 'push', '-q', 'origin', 'HEAD:main')
    revs.push(gitAs(PAT, work, 'rev-parse', 'HEAD').trim())
    const rec = await s.request('POST', '/reconcile')
    if (rec.status !== 200) throw new Error(rec.text)
  }
  return revs
}

t.test('4,000 changed lines: the diff, from the worker', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const body = (c: string) => `${Array.from({ length: 4000 }, (_, i) => `#${c}${i}`).join('\n')}\n`
  const [a, b] = await pushVersions(s, [HEAD + body('a'), HEAD + body('b')])
  const d = await s.request('GET', `/simple-rules/Big.Diff/diff?from=${a}&to=${b}`)
  t.equal(d.status, 200, d.text)
  const lines = d.body.files[0].unifiedDiff.split('\n')
  t.equal(lines.filter((l: string) => l.startsWith('-#a')).length, 4000)
  t.equal(lines.filter((l: string) => l.startsWith('+#b')).length, 4000)
  t.match(
    d.body.files[0].unifiedDiff,
    /^--- a\/simple_rules\/Big\.Diff\.yml\n\+\+\+ b\/simple_rules\/Big\.Diff\.yml\n@@ -7,4003 \+7,4003 @@\n/,
  )
})

t.test('over the bound on lines: 413 with a clear message, other reads unaffected', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const blank = '#\n'.repeat(100_000)
  const [a, b] = await pushVersions(s, [HEAD + blank, `${HEAD + blank}# one more\n`])
  const d = await s.request('GET', `/simple-rules/Big.Diff/diff?from=${a}&to=${b}`)
  t.equal(d.status, 413, d.text)
  t.equal(d.body.code, 'PayloadTooLarge')
  t.match(d.body.message, /simple_rules\/Big\.Diff\.yml has \d+ \+ \d+ lines .*at most 200000 lines.*git diff/)
  t.equal((await s.request('GET', '/simple-rules/Big.Diff/history')).status, 200, 'the history still reads')
  t.equal((await s.send('GET', '/healthz')).status, 200)
})
