// A value's floor (value-floor.ts), read from DuckDB's vectors without converting: never more than the
// value's JSON size (a row that fits is never refused), and for strings, blobs and long lists close
// enough to it that a huge value is caught before it is built.
import { DuckDBInstance } from '@duckdb/node-api'
import t from 'tap'
import { jsonSize, toJson } from '../../src/query/json-values.js'
import { valueFloor } from '../../src/query/value-floor.js'

const SQL = `SELECT * FROM (VALUES
  (1, 'short', NULL::VARCHAR, '\\xAA\\xBBabc'::BLOB, [1, 2, 3], {'a': 'xyz', 'b': [NULL, 'q']}, MAP {'k': 'v'}, [1, 2]::INTEGER[2], NULL::INTEGER[][]),
  (2, repeat('y', 50000), 'inline12char', NULL::BLOB, range(0, 1000), {'a': repeat('z', 300), 'b': []}, MAP {'long': repeat('w', 1000)}, [3, 4]::INTEGER[2], [[1], [2, 3]])
) AS t(i, s, n, b, l, st, m, a, nested)`

t.test('the floor never exceeds the JSON size, and follows long values', async (t) => {
  const instance = await DuckDBInstance.create(':memory:')
  const conn = await instance.connect()
  t.teardown(() => {
    conn.closeSync()
    instance.closeSync()
  })
  const result = await conn.run(SQL)
  const chunk = (await result.fetchChunk())!
  const names = result.deduplicatedColumnNames()
  for (let c = 0; c < names.length; c++) {
    const vector = chunk.getColumnVector(c)
    for (let r = 0; r < chunk.rowCount; r++) {
      const size = jsonSize(toJson(vector.getItem(r)))
      const floor = valueFloor(vector, r, Number.MAX_SAFE_INTEGER)
      t.ok(floor <= size, `${names[c]} row ${r}: floor ${floor} ≤ size ${size}`)
      if (size > 1000) t.ok(floor * 5 >= size, `${names[c]} row ${r}: floor ${floor} follows size ${size}`)
    }
  }
  // Counting stops once past the limit (a 50,000-byte string against a limit of 100).
  const s = chunk.getColumnVector(names.indexOf('s'))
  t.ok(valueFloor(s, 1, 100) > 100)
})
