// Which stored lines go to a Python worker as they are (stored-lines.ts): one balanced JSON object
// with no raw control character and no NaN/Infinity outside strings, so that in a JSON array of
// them a damaged line can never take a neighbour's place. Any other line is parsed on the server.
import t from 'tap'
import { ChunkLines, plainObjectLine } from '../../src/detect/stored-lines.js'
import { StoredRecord } from '../../src/detect/stored-log.js'

t.test('lines the log source writes go as they are', async (t) => {
  for (const record of [
    { a: 1, b: 'x"}{][', c: [1, { d: null }], e: '\t\n\u0000', f: 'NaN Infinity', p_log_type: 'Editor.Audit' },
    { n: -1.5e-7, s: '\\', u: '\ud800', nested: { deep: [[[]]] } },
    {},
  ])
    t.ok(plainObjectLine(JSON.stringify(record)), JSON.stringify(record))
  t.ok(plainObjectLine('{"x":1.0}'), 'a float written 1.0')
})

t.test("a line that could take a neighbour's place, or read differently in Python, does not", async (t) => {
  for (const line of [
    '{"a":1},{"b":2}', // two objects
    '{"a":[1}', // unbalanced
    '{"a":[1]', // unclosed
    '{"a":"x}', // unterminated string
    '{"a":"tab\there"}', // a raw control character
    '{"a":1}\t',
    '{"a":NaN}', // Python reads it, JSON.parse does not
    '{"a":-Infinity}',
    '[{"a":1}]',
    '"{}"',
    '',
  ])
    t.notOk(plainObjectLine(line), JSON.stringify(line))
})

t.test('a line that does not go as it is is parsed: serialized again when readable', async (t) => {
  const rec = (i: number, line: string) => new StoredRecord('f', i, i + 1, line, 'p', `r${i}`, 'Editor.Audit', '')
  const records = [rec(0, '{"x":1.0}'), rec(1, '{ "y" : 2 ,\t"z":NaN}'), rec(2, '{\t"y":2}')]
  const plain = Uint8Array.from(records.map((r) => (plainObjectLine(r.line) ? 1 : 0)))
  const lines = new ChunkLines(records, [0, 2], plain)
  t.same(lines.lines, ['{"x":1.0}', '{"y":2}'], 'as stored, else re-serialized')
  t.equal(lines.readable(1), true)
  t.same(lines.record(1), { y: 2 })
  t.equal(records[1]!.readable, false, 'NaN: not a record for JSON.parse')
})
