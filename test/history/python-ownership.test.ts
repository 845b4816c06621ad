// History metadata of scheduled rules follows their Python file: a commit changing only the .py a
// rule's `Filename` names (in the rule's folder) modifies that rule; moves keep the ownership; a
// .py no longer named by any rule, or one in another folder, modifies nothing.
import t from 'tap'
import { HistoryTracker, type CommitFileChange } from '../../src/service/history.js'

const person = (n: number) => ({
  name: 'Pat',
  email: 'pat@example.com',
  timestamp: 1_700_000_000 + n * 60,
  tzOffsetMinutes: 0,
})
const yml = (id: string, filename: string) =>
  `AnalysisType: scheduled_rule\nRuleID: ${id}\nFilename: ${filename}\nScheduledQueries: [Q]\n`

t.test('a rule is modified by changes to the .py it names, wherever the pair moves', async (t) => {
  const h = new HistoryTracker(null, () => false)
  let n = 0
  const commit = (changes: CommitFileChange[]) => {
    const oid = String(++n).padStart(40, '0')
    h.apply({ oid, message: `c${n}`, author: person(n) }, changes)
    return oid
  }
  const a = commit([
    { path: 'rules/x.yml', text: yml('X', 'x.py') },
    { path: 'rules/x.py', text: '' },
    { path: 'other/y.yml', text: yml('Y', 'x.py') },
    { path: 'other/x.py', text: '' },
  ])
  t.equal(h.get('X')?.created.commit, a)
  t.equal(h.get('Y')?.created.commit, a)

  const b = commit([{ path: 'rules/x.py', text: '' }])
  t.equal(h.get('X')?.modified.commit, b, 'its own .py modifies X')
  t.equal(h.get('Y')?.modified.commit, a, 'a .py of the same name in another folder does not modify Y')

  const c = commit([
    { path: 'rules/x.yml', text: null },
    { path: 'rules/x.py', text: null },
    { path: 'moved/x.yml', text: yml('X', 'x.py') },
    { path: 'moved/x.py', text: '' },
  ])
  t.same([h.get('X')?.created.commit, h.get('X')?.modified.commit], [a, c], 'a move keeps the creation')
  const d = commit([{ path: 'moved/x.py', text: '' }])
  t.equal(h.get('X')?.modified.commit, d, 'the .py at its new place is followed')
  commit([{ path: 'rules/x.py', text: '' }])
  t.equal(h.get('X')?.modified.commit, d, 'the old place is no longer X')

  const e = commit([
    { path: 'moved/x.yml', text: yml('X', 'z.py') },
    { path: 'moved/z.py', text: '' },
  ])
  t.equal(h.get('X')?.modified.commit, e)
  commit([{ path: 'moved/x.py', text: '' }])
  t.equal(h.get('X')?.modified.commit, e, 'a .py the rule stopped naming modifies nothing')
  const g = commit([{ path: 'moved/z.py', text: '' }])
  t.equal(h.get('X')?.modified.commit, g, 'the newly named .py does')

  const del = commit([{ path: 'moved/x.yml', text: null }])
  t.equal(h.get('X'), undefined, 'deleted')
  commit([{ path: 'moved/z.py', text: '' }])
  t.equal(h.get('X'), undefined, 'its orphaned .py does not bring it back')
  const again = commit([{ path: 'moved/x.yml', text: yml('X', 'z.py') }])
  t.same([h.get('X')?.created.commit, h.get('X')?.modified.commit], [again, again], 'a new life after deletion')
  t.not(again, del)
  const last = commit([{ path: 'moved/z.py', text: '' }])
  t.equal(h.get('X')?.modified.commit, last, 'and it owns its .py again')
  t.equal(h.get('Y')?.modified.commit, a, 'Y was never touched')
})
