// `npm run bench` rewrites BENCHMARKS.md's results table and nothing else: the rows of modules it
// did not run (a fresh checkout has no latest.json to carry them) and the hand-written sections
// after the table stay as they were.
import t from 'tap'
import { mergeMarkdown, type RunReport } from '../../bench/run.js'

const previous = `# Benchmarks

Last run: earlier.

| module | name | target | value | baseline | ratio | pass | notes |
| --- | --- | --- | --- | --- | --- | --- | --- |
| alpha (run 2026-11-01 10:00, scale 1) | old alpha | t | 1 x | | | ✓ | |
| beta | old beta | t | 2 x | | | ✓ | |

## A hand-written section

Measured by hand, with a table:

| a | b |
| --- | --- |
| 1 | 2 |
`

const report: RunReport = {
  date: '2026-11-27T10:00:00.000Z',
  machine: { nproc: 2, cpus: 'cpu', node: 'v20', platform: 'linux', loadavg: [1, 1, 1] },
  scale: 1,
  filter: ['beta'],
  modules: [
    {
      module: 'beta',
      date: '2026-11-27T10:00:00.000Z',
      scale: 1,
      seconds: 1,
      results: [{ name: 'new beta', target: 't', value: 3, unit: 'x', pass: true }],
    },
  ],
} as RunReport

t.test('a filtered run replaces its own rows only and keeps the hand-written sections', async (t) => {
  const out = mergeMarkdown(previous, report)
  t.match(out, /\| beta \| new beta \|/, 'the module run has its new row')
  t.notMatch(out, /old beta/, 'and not its old one')
  t.match(out, /\| alpha \(run 2026-11-01 10:00, scale 1\) \| old alpha \|/, 'a module not run keeps its row')
  t.ok(out.indexOf('old alpha') < out.indexOf('new beta'), 'rows sorted by module')
  t.match(
    out,
    /## A hand-written section\n\nMeasured by hand, with a table:\n\n\| a \| b \|\n\| --- \| --- \|\n\| 1 \| 2 \|\n/,
  )
  t.equal(out.match(/\| a \| b \|/g)?.length, 1, 'the hand-written table is not taken for results')
  t.equal(mergeMarkdown(out, report), out, 'running it again changes nothing')
})

t.test('without a previous file, the table alone', async (t) => {
  const out = mergeMarkdown('', report)
  t.match(out, /^# Benchmarks\n/)
  t.match(out, /\| beta \| new beta \|/)
  t.notMatch(out, /## /)
})
