// The id rules as functions: the explanation (idCharacterProblem) and the OpenAPI pattern agree on
// every code point, the check stays linear on huge strings, and the case fold meets what
// case-insensitive disks (and readers) take for one name.
import t from 'tap'
import { foldId, ID_PATTERN, idCharacterProblem, idProblem } from '../../src/rules/rule-id.js'

t.test('the pattern and the check agree on every code point', async (t) => {
  const pattern = new RegExp(ID_PATTERN, 'u')
  let disagreements = 0
  let refused = 0
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    const id = `a${String.fromCodePoint(cp)}b`
    if ((cp < 0xd800 || cp > 0xdfff) && id.normalize('NFC') !== id) continue // NFC is the check's alone
    const bad = idCharacterProblem(id) !== undefined
    if (bad) refused++
    if (bad === pattern.test(id)) disagreements++
  }
  t.equal(disagreements, 0)
  t.ok(refused > 0x10000, 'surrogates, private use and the rest are refused')
})

t.test('messages name the problem', async (t) => {
  t.match(idProblem(''), 'empty')
  t.match(idProblem('x'.repeat(256)), '255')
  t.equal(idProblem('😀'.repeat(255)), undefined, 'length counts code points')
  t.match(idProblem('a\u202eb'), /U\+202E.*bidirectional/)
  t.match(idProblem('a\ud800'), /lone surrogate/)
  t.match(idProblem(' a'), 'space')
  t.match(idProblem('e\u0301'), /NFC.*"é"/)
  t.match(idProblem('a%b'), '"%"')
})

t.test('the check is linear on a 10 MB string', async (t) => {
  const started = Date.now()
  t.equal(idCharacterProblem('a'.repeat(10_000_000)), undefined)
  t.match(idCharacterProblem(`${'a'.repeat(10_000_000)}\u200b`), 'U+200B')
  t.ok(Date.now() - started < 2000, `${Date.now() - started} ms`)
})

t.test('the case fold', async (t) => {
  const same = [
    ['AWS.Root', 'aws.root'],
    ['Straße', 'STRASSE'],
    ['ſ', 'S'],
    ['ς', 'Σ'],
    ['Ǆ', 'ǆ'],
    ['İ', 'i̇'],
  ]
  for (const [a, b] of same) t.equal(foldId(a!), foldId(b!), `${a} ~ ${b}`)
  t.not(foldId('a.b'), foldId('a_b'))
  t.equal(foldId('ı'), foldId('I'), 'dotless ı meets I: stricter than a disk, never looser')
})
