// Lines end at `\n` only: commit trailers (read and written) and the fast RuleID reader of the history
// tracker never take U+2028/U+2029/U+0085 for a line break, so an id or a value cannot forge a line.
import t from 'tap'
import { commitActor, quickIdentity } from '../../src/service/history.js'
import { formatTrailers, parseTrailers } from '../../src/service/trailers.js'
import { commitMessage } from '../../src/service/rule-writer.js'

const author = { name: 'Pat', email: 'pat@example.com', timestamp: 0, tzOffsetMinutes: 0 }
// As on a commit the service made (the only commits whose trailers are believed).
const actorOf = (message: string) => commitActor({ message, author }, true)
const PAT = { id: 'pat@example.com', type: 'user' }

t.test('trailers are the last paragraph, split at \\n only', async (t) => {
  t.same(actorOf('Create\n\nRule-Id: A\nActor-Id: tok_a\nActor-Type: api-token\n'), { id: 'tok_a', type: 'api-token' })
  t.same(
    actorOf('Create\r\n\r\nActor-Id: tok_a\r\nActor-Type: api-token\r\n'),
    { id: 'tok_a', type: 'api-token' },
    'CRLF messages too',
  )
  for (const sep of ['\u2028', '\u2029', '\u0085', '\r', '\u000b', '\u000c']) {
    const label = `U+${sep.codePointAt(0)!.toString(16).padStart(4, '0')}`
    t.same(
      actorOf(`Create\n\nRule-Id: A${sep}Actor-Id: tok_evil\nActor-Type: api-token\n`),
      PAT,
      `${label} does not start a line`,
    )
    t.same(
      actorOf(`Create\n\nRule-Id: A\nActor-Id: tok_a${sep}x\nActor-Type: api-token\n`),
      PAT,
      `${label} inside a value voids it`,
    )
  }
  t.same(actorOf('Actor-Id: tok_evil\nActor-Type: api-token\n'), PAT, 'a subject alone has no trailers')
  t.same(
    actorOf('Create\n\nActor-Id: tok_evil\nActor-Type: api-token\n\nSigned-off-by: x\n'),
    PAT,
    'only the last paragraph',
  )
  t.same(
    actorOf('Create\n\nActor-Id: tok_a\nActor-Id: tok_b\nActor-Type: api-token\n'),
    PAT,
    'an ambiguous actor is no actor',
  )
  t.same(actorOf('Create\n\nActor-Id: tok_a\nActor-Type: root\n'), PAT, 'an unknown type is no actor')
  t.same(
    [...parseTrailers('S\n\nA: 1\nB:2\nnot a trailer\nA: 3\n')],
    [
      ['A', ['1', '3']],
      ['B', ['2']],
    ],
  )
})

t.test('trailer values written are one line', async (t) => {
  t.equal(
    formatTrailers([
      ['Rule-Id', 'A.B'],
      ['Actor-Id', 'tok_x'],
    ]),
    'Rule-Id: A.B\nActor-Id: tok_x',
  )
  // (The label names code points: a raw U+2028 would split the TAP output line itself.)
  for (const v of ['a\nb', 'a\rb', 'a\u2028b', 'a\u2029b', 'a\u0085b', 'a\u0000b', ' a'])
    t.throws(
      () => formatTrailers([['Rule-Id', v]]),
      `${[...v].map((c) => c.codePointAt(0)!.toString(16)).join(' ')} is refused`,
    )
  const op = {
    type: 'delete' as const,
    kind: 'simple' as const,
    id: 'A\u2028Actor-Id: tok_evil',
    actor: { id: 'tok_a', type: 'api-token' as const, name: 'a', email: 'a@x' },
    requestId: 'r',
  }
  t.throws(() => commitMessage('Delete', op), 'a commit message never carries a multi-line trailer')
})

t.test("the history's fast RuleID reader sees lines as YAML does", async (t) => {
  t.same(quickIdentity('AnalysisType: rule\nRuleID: Real.One\nSeverity: Low\n'), {
    id: 'Real.One',
    filename: undefined,
  })
  t.same(quickIdentity('AnalysisType: rule\r\nRuleID: Real.One\r\n'), { id: 'Real.One', filename: undefined })
  t.same(quickIdentity('AnalysisType: rule\nDescription: x\u2028RuleID: Victim\n'), {}, 'no RuleID in YAML terms')
  t.same(quickIdentity('AnalysisType: rule\nDescription: x\u2028RuleID: Victim\nRuleID: Real.Two\n'), {
    id: 'Real.Two',
    filename: undefined,
  })
  t.same(
    quickIdentity('AnalysisType: rule\nRuleID: Real.Three\nDescription: x\u2029Filename: evil.py\n').filename,
    undefined,
  )
})

t.test('trailers are believed only on commits the service made', async (t) => {
  const message = 'Create\n\nRule-Id: A\nActor-Id: tok_bootstrap\nActor-Type: api-token\n'
  t.same(commitActor({ message, author }, true), { id: 'tok_bootstrap', type: 'api-token' })
  t.same(commitActor({ message, author }, false), PAT, 'a plain-git commit is its author’s, whatever it says')
  t.same(commitActor({ message: 'Init\n\nActor-Id: system\nActor-Type: system\n', author }, false), PAT, 'system too')
})
