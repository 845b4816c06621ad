// The rewrites a query goes through before DuckDB sees it: Panther's time macros (each pinned to
// the expansion Panther documents: since ≥ now − offset, between inclusive, around ± offset, after
// ≥, before ≤; a bare number is seconds; a time without a zone is UTC; an alias and a column may
// follow) and Snowflake's path access on JSON columns; neither touches literals or comments.
import t from 'tap'
import { expandTimeMacros, literalTime, offsetSeconds } from '../../src/engine/sql/time-macros.js'
import { rewriteSnowflakePaths } from '../../src/engine/sql/snowflake-paths.js'
import { maskSql, splitSql } from '../../src/engine/sql/sql-text.js'

const NOW = Date.parse('2026-11-20T10:30:00.000Z')

t.test('offsets: seconds, or N with Panther’s unit words', async (t) => {
  t.equal(offsetSeconds('900'), 900)
  t.equal(offsetSeconds("'900'"), 900)
  t.equal(offsetSeconds("'1 hour'"), 3600)
  t.equal(offsetSeconds("'96 hrs'"), 96 * 3600)
  t.equal(offsetSeconds("'6 d'"), 6 * 86_400)
  t.equal(offsetSeconds("'2 weeks'"), 14 * 86_400)
  t.equal(offsetSeconds("'15 m'"), 900)
  t.equal(offsetSeconds("'30 sec'"), 30)
  t.throws(() => offsetSeconds("'1 fortnight'"), { name: 'RulekeeperError', message: /./ })
})

t.test('times: RFC 3339, or a zone-less time read as UTC', async (t) => {
  t.equal(literalTime("'2024-01-01'"), Date.parse('2024-01-01T00:00:00Z'))
  t.equal(literalTime("'2024-01-01 10:00:00'"), Date.parse('2024-01-01T10:00:00Z'))
  t.equal(literalTime("'2024-01-15T10:30:00Z'"), Date.parse('2024-01-15T10:30:00Z'))
  t.equal(literalTime("'2024-01-15T12:30:00+02:00'"), Date.parse('2024-01-15T10:30:00Z'))
  t.equal(literalTime('current_date - 1'), undefined)
  t.throws(() => literalTime("'yesterday'"), { name: 'RulekeeperError', message: /./ })
})

t.test('p_occurs_since: p_event_time ≥ now − offset, and the hour partitions from that hour on', async (t) => {
  t.equal(
    expandTimeMacros("SELECT 1 FROM x WHERE p_occurs_since('1 hour')", NOW),
    "SELECT 1 FROM x WHERE (p_event_time >= TIMESTAMP '2026-11-20 09:30:00.000' AND " +
      "(p_date > DATE '2026-11-20' OR (p_date = DATE '2026-11-20' AND p_hour >= 9)))",
  )
  t.equal(
    expandTimeMacros('WHERE p_occurs_since(86400, ct1)', NOW, false),
    "WHERE (ct1.p_event_time >= TIMESTAMP '2026-11-19 10:30:00.000')",
  )
  t.equal(
    expandTimeMacros("WHERE P_OCCURS_SINCE('1 d', t, p_parse_time)", NOW),
    "WHERE (t.p_parse_time >= TIMESTAMP '2026-11-19 10:30:00.000')",
    'another column: no partition filter',
  )
})

t.test('p_occurs_between: both ends inclusive; an expression is cast, not pruned', async (t) => {
  t.equal(
    expandTimeMacros("p_occurs_between('2024-01-01', '2024-01-02 05:00:00')", NOW, false),
    "(p_event_time >= TIMESTAMP '2024-01-01 00:00:00.000' AND p_event_time <= TIMESTAMP '2024-01-02 05:00:00.000')",
  )
  t.equal(
    expandTimeMacros('p_occurs_between(current_date - 1, current_timestamp)', NOW),
    '(p_event_time >= CAST((current_date - 1) AS TIMESTAMP) AND p_event_time <= CAST((current_timestamp) AS TIMESTAMP))',
  )
})

t.test('p_occurs_around is ± the offset; after is ≥; before is ≤', async (t) => {
  t.equal(
    expandTimeMacros("p_occurs_around('2024-01-15T10:30:00Z', '1 h')", NOW, false),
    "(p_event_time >= TIMESTAMP '2024-01-15 09:30:00.000' AND p_event_time <= TIMESTAMP '2024-01-15 11:30:00.000')",
  )
  t.equal(
    expandTimeMacros("p_occurs_after('2024-01-01')", NOW, false),
    "(p_event_time >= TIMESTAMP '2024-01-01 00:00:00.000')",
  )
  t.equal(
    expandTimeMacros("p_occurs_before('2024-01-01', a)", NOW, false),
    "(a.p_event_time <= TIMESTAMP '2024-01-01 00:00:00.000')",
  )
})

t.test('macros inside literals and comments stay as written; line breaks are kept', async (t) => {
  const sql = "SELECT 'p_occurs_since(1)' -- p_occurs_since(2)\nFROM x WHERE p_occurs_since(\n'1 h'\n)"
  const out = expandTimeMacros(sql, NOW, false)
  t.match(out, /^SELECT 'p_occurs_since\(1\)' -- p_occurs_since\(2\)\nFROM x WHERE \(p_event_time >= /)
  t.equal(out.split('\n').length, sql.split('\n').length)
  t.throws(() => expandTimeMacros('p_occurs_since()', NOW), { name: 'RulekeeperError', message: /./ })
  t.throws(() => expandTimeMacros("p_occurs_since('1 h', 'x y')", NOW), { name: 'RulekeeperError', message: /./ })
})

t.test('Snowflake paths: ::string is ->>, other casts CAST(-> AS type), none is JSON', async (t) => {
  t.equal(
    rewriteSnowflakePaths("update_user_role:new_role::string IN ('admin')"),
    "(update_user_role->>'$.new_role') IN ('admin')",
  )
  t.equal(rewriteSnowflakePaths('t.col:a.b[0]::varchar'), "(t.col->>'$.a.b[0]')")
  t.equal(rewriteSnowflakePaths('col:"bucketName"::string'), `(col->>'$.bucketName')`)
  t.equal(rewriteSnowflakePaths('col:"a b"'), `(col->'$."a b"')`)
  t.equal(rewriteSnowflakePaths("col['x']:: string"), "col['x']:: string", 'bracket access on a column is left alone')
  t.equal(rewriteSnowflakePaths('col:n::int'), "CAST((col->'$.n') AS BIGINT)")
  t.equal(rewriteSnowflakePaths('col:n::number'), "CAST((col->'$.n') AS DECIMAL(38,0))")
  t.equal(rewriteSnowflakePaths('col:n::number(10,2)'), "CAST((col->'$.n') AS DECIMAL(10,2))")
  t.equal(rewriteSnowflakePaths('col:ok::boolean'), "CAST((col->'$.ok') AS BOOLEAN)")
  t.equal(rewriteSnowflakePaths('col:o::variant'), "(col->'$.o')")
})

t.test('paths leave DuckDB syntax alone: casts, slices, struct keys, named arguments, literals', async (t) => {
  for (const sql of ['x::string', 'l[a:b]', '{a: 1}', 'struct_pack(a := 1)', "'a:b'", '"a:b"', '-- a:b', 'x[1:2]'])
    t.equal(rewriteSnowflakePaths(sql), sql, sql)
})

t.test('the scanner: pieces join back to the text; the mask keeps length and line breaks', async (t) => {
  const sql = "SELECT 'it''s', E'a\\'b', $$x$$, \"q\"\"d\" /* c\n */ -- e\n1"
  t.equal(
    splitSql(sql)
      .map((p) => p.text)
      .join(''),
    sql,
  )
  const masked = maskSql(sql)
  t.equal(masked.length, sql.length)
  t.equal(masked.split('\n').length, sql.split('\n').length)
  t.notMatch(masked, /it|x\$|q"/)
})
