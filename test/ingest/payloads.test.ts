// Payload forms, compression, limits and broken bodies, each over real HTTP. A refused request must
// answer its documented status and leave the store exactly as it was (no file at all here).
// Real port: raw header bytes or lying lengths (chunked, compressed and broken bodies).
import { gzipSync } from 'node:zlib'
import t from 'tap'
import { startIngestServer, type IngestServer } from './fixtures/ingest-app.js'
import { TOKEN, makeRecord, ndjson, post, storeFiles, storedLines, storedRecords, tempDataDir } from './helpers.js'

const env = { RULEKEEPER_EDITOR_AUDIT_TOKEN: TOKEN }
const auth = { authorization: `Bearer ${TOKEN}` }

async function server(
  t: { teardown(fn: () => unknown): void },
  overrides: Record<string, unknown> = {},
): Promise<{ s: IngestServer; dataDir: string }> {
  const dataDir = await tempDataDir(t)
  const s = await startIngestServer({ dataDir, env, overrides })
  t.teardown(() => s.close())
  return { s, dataDir }
}

const records = (n: number, prefix = 'r') => Array.from({ length: n }, (_, i) => makeRecord(`${prefix}-${i}`))

t.test('each payload form is read whatever the Content-Type says', async (t) => {
  const { s, dataDir } = await server(t)
  const cases: Array<[string, string, string, number]> = [
    ['one object', JSON.stringify(makeRecord('obj-1')), 'application/json', 1],
    ['a pretty-printed object', JSON.stringify(makeRecord('obj-2'), null, 2), 'text/plain', 1],
    ['an array', JSON.stringify(records(3, 'arr')), 'application/x-ndjson', 3],
    [
      'NDJSON with blank and CRLF lines',
      `\r\n${JSON.stringify(makeRecord('nd-1'))}\r\n\n${JSON.stringify(makeRecord('nd-2'))}`,
      'application/json',
      2,
    ],
    ['NDJSON without a final newline', ndjson(records(4, 'nd2')).trimEnd(), 'application/octet-stream', 4],
    ['a UTF-8 byte order mark', `\ufeff${JSON.stringify(makeRecord('bom-1'))}`, 'application/json', 1],
  ]
  let total = 0
  for (const [name, body, type, n] of cases) {
    const res = await post(`${s.url}/http/editor-audit`, body, { ...auth, 'content-type': type })
    t.equal(res.status, 200, name)
    t.same({ accepted: res.body.accepted, rejected: res.body.rejected }, { accepted: n, rejected: 0 }, name)
    total += n
  }
  t.equal((await storedRecords(dataDir)).length, total)
})

t.test('gzip is detected from the bytes, with or without Content-Encoding', async (t) => {
  const { s, dataDir } = await server(t)
  const gz = (prefix: string) => gzipSync(ndjson(records(50, prefix)))
  const withHeader = await post(`${s.url}/http/editor-audit`, gz('gzh'), { ...auth, 'content-encoding': 'gzip' })
  t.equal(withHeader.status, 200)
  t.equal(withHeader.body.accepted, 50)
  const without = await post(`${s.url}/http/editor-audit`, gz('gzn'), auth)
  t.equal(without.status, 200)
  t.equal(without.body.accepted, 50)
  const chunked = await post(`${s.url}/http/editor-audit`, gz('gzc'), auth, { chunked: true })
  t.equal(chunked.body.accepted, 50)
  // A header that claims gzip over a plain body is not believed either: the bytes decide.
  const lying = await post(`${s.url}/http/editor-audit`, JSON.stringify(makeRecord('plain-1')), {
    ...auth,
    'content-encoding': 'gzip',
  })
  t.equal(lying.status, 200)
  t.equal((await storedRecords(dataDir)).length, 151)
})

t.test('refused bodies answer their status and store nothing', async (t) => {
  const { s, dataDir } = await server(t)
  const big = Buffer.alloc(1024 * 1024 + 1, 0x20)
  const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20), { level: 9 })
  t.ok(bomb.length < 1024 * 1024, 'the bomb fits in the compressed limit')
  const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(JSON.stringify(makeRecord('u16')), 'utf16le')])
  const corruptGzip = Buffer.from(gzipSync(ndjson(records(20, 'cg'))))
  corruptGzip.fill(0x41, 20, 60)
  const cases: Array<{
    name: string
    body: Buffer | string
    status: number
    message: RegExp
    headers?: Record<string, string>
    chunked?: boolean
  }> = [
    { name: 'empty body', body: '', status: 400, message: /empty/ },
    { name: 'whitespace only', body: ' \n\r\n\t', status: 400, message: /empty/ },
    { name: 'not JSON', body: 'hello, world\nsecond line', status: 400, message: /not JSON/ },
    { name: 'HTML', body: '<html><body>oops</body></html>', status: 400, message: /not JSON/ },
    { name: 'a JSON scalar', body: '42', status: 400, message: /JSON object/ },
    { name: 'an empty array', body: '[]', status: 400, message: /empty array/ },
    { name: 'truncated gzip', body: gzipSync(ndjson(records(20, 'tg'))).subarray(0, 40), status: 400, message: /gzip/ },
    { name: 'corrupt gzip', body: corruptGzip, status: 400, message: /gzip/ },
    { name: 'over 1 MiB declared', body: big, status: 413, message: /larger than the limit of 1048576/ },
    { name: 'over 1 MiB chunked', body: big, status: 413, message: /larger than the limit of 1048576/, chunked: true },
    { name: 'gzip bomb', body: bomb, status: 413, message: /decompressed body is larger than the limit of 16777216/ },
    { name: 'gzip bomb chunked', body: bomb, status: 413, message: /decompressed/, chunked: true },
    {
      name: '10,001 records',
      body: gzipSync(ndjson(records(10_001, 'many'))),
      status: 413,
      message: /at most 10000 records/,
    },
    {
      name: '10,001 records as an array',
      body: gzipSync(JSON.stringify(records(10_001, 'many'))),
      status: 413,
      message: /at most 10000 records/,
    },
    {
      name: 'brotli declared',
      body: JSON.stringify(makeRecord('br')),
      status: 415,
      message: /br is not supported.*gzip/,
      headers: { 'content-encoding': 'br' },
    },
    {
      name: 'zstd bytes',
      body: Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0]),
      status: 415,
      message: /zstd compression is not supported.*gzip/,
    },
    { name: 'UTF-16 with BOM', body: utf16, status: 415, message: /UTF-8/ },
    { name: 'gzip of UTF-16', body: gzipSync(utf16), status: 415, message: /decompressed body looks like UTF-16/ },
    {
      name: 'UTF-16 without BOM',
      body: Buffer.from(JSON.stringify(makeRecord('u16b')), 'utf16le'),
      status: 415,
      message: /UTF-8/,
    },
    {
      name: 'a declared latin-1 charset',
      body: JSON.stringify(makeRecord('l1')),
      status: 415,
      message: /charset iso-8859-1/,
      headers: { 'content-type': 'application/json; charset=ISO-8859-1' },
    },
  ]
  for (const c of cases) {
    const res = await post(
      `${s.url}/http/editor-audit`,
      c.body,
      { ...auth, ...(c.headers ?? {}) },
      { chunked: c.chunked },
    )
    t.equal(res.status, c.status, c.name)
    t.match(res.body.message, c.message, c.name)
  }
  t.same(await storeFiles(dataDir), [], 'no file was created by any refused request')
  // The server is still healthy after all that.
  const ok = await post(`${s.url}/http/editor-audit`, JSON.stringify(makeRecord('after')))
  t.equal(ok.status, 200)
})

t.test('exactly 10,000 records and exactly 1 MiB are still accepted', async (t) => {
  const { s, dataDir } = await server(t)
  const res = await post(`${s.url}/http/editor-audit`, gzipSync(ndjson(records(10_000, 'edge'))))
  t.equal(res.status, 200)
  t.equal(res.body.accepted, 10_000)
  const one = JSON.stringify(makeRecord('pad-1'))
  const exact = one + ' '.repeat(1024 * 1024 - Buffer.byteLength(one))
  const res2 = await post(`${s.url}/http/editor-audit`, exact)
  t.equal(res2.status, 200)
  t.equal((await storedRecords(dataDir)).length, 10_001)
})

t.test('limits are configurable per source', async (t) => {
  const { s, dataDir } = await server(t, {
    logSources: [
      {
        id: 'editor-audit',
        logType: 'Editor.Audit',
        auth: { method: 'Bearer', tokenEnv: 'RULEKEEPER_EDITOR_AUDIT_TOKEN' },
        limits: { maxCompressedBytes: 4096, maxDecompressedBytes: 20000, maxRecords: 5 },
      },
    ],
  })
  const r6 = await post(`${s.url}/http/editor-audit`, ndjson(records(6, 'l6')))
  t.equal(r6.status, 413, 'more records than maxRecords')
  t.match(r6.body.message, /at most 5 records/)
  const big = await post(
    `${s.url}/http/editor-audit`,
    JSON.stringify(makeRecord('x', undefined, { pad: 'y'.repeat(5000) })),
  )
  t.equal(big.status, 413, 'over maxCompressedBytes')
  const inflated = await post(
    `${s.url}/http/editor-audit`,
    gzipSync(JSON.stringify(makeRecord('x', undefined, { pad: 'y'.repeat(30000) }))),
  )
  t.equal(inflated.status, 413, 'over maxDecompressedBytes')
  t.match(inflated.body.message, /decompressed body is larger than the limit of 20000/)
  t.same(await storeFiles(dataDir), [])
  t.equal((await post(`${s.url}/http/editor-audit`, ndjson(records(5, 'l5')))).status, 200)
})

t.test('invalid UTF-8 rejects only the record that holds it', async (t) => {
  const { s, dataDir } = await server(t)
  const good1 = Buffer.from(`${JSON.stringify(makeRecord('utf-1'))}\n`)
  const bad = Buffer.from(`${JSON.stringify(makeRecord('utf-2', undefined, { note: 'caf__' }))}\n`)
  const at = bad.indexOf('caf__') + 3
  bad[at] = 0xe9 // latin-1 é: not UTF-8
  bad[at + 1] = 0xff
  const good2 = Buffer.from(`${JSON.stringify(makeRecord('utf-3', undefined, { note: 'café ✓ 😀' }))}\n`)
  const res = await post(`${s.url}/http/editor-audit`, Buffer.concat([good1, bad, good2]))
  t.equal(res.status, 200)
  t.same({ a: res.body.accepted, r: res.body.rejected }, { a: 2, r: 1 })
  t.match(res.body.errors[0], { index: 1, message: /invalid UTF-8/ })
  const stored = await storedRecords(dataDir)
  t.same(stored.map((x) => x.record.metadata.id).sort(), ['utf-1', 'utf-3'])
  t.equal(
    stored.find((x) => x.record.metadata.id === 'utf-3')!.record.note,
    'café ✓ 😀',
    'valid multi-byte text is intact',
  )
  const rejected = await storedLines(dataDir, '_rejected')
  t.equal(rejected.length, 1)
  t.ok(rejected[0]!.text.includes('caf\\udce9\\udcff'), 'the bad bytes are kept, escaped as \\udcNN')
  t.equal(JSON.parse(rejected[0]!.text).raw.metadata.id, 'utf-2')

  // The same inside a JSON array body, and an escaped lone surrogate counts as invalid too.
  const arr = Buffer.concat([
    Buffer.from('['),
    good1.subarray(0, -1),
    Buffer.from(','),
    bad.subarray(0, -1),
    Buffer.from(']'),
  ])
  const res2 = await post(`${s.url}/http/editor-audit`, arr)
  t.same({ a: res2.body.accepted, d: res2.body.duplicates, r: res2.body.rejected }, { a: 0, d: 1, r: 1 })
  const lone = JSON.stringify(makeRecord('utf-4', undefined, { note: 'x' })).replace('"x"', '"\\ud800x"')
  const res3 = await post(`${s.url}/http/editor-audit`, lone)
  t.equal(res3.body.rejected, 1)
})

t.test('a record nested deeper than 64 levels is rejected alone and kept', async (t) => {
  const { s, dataDir } = await server(t)
  const deep = (n: number) => '['.repeat(n) + ']'.repeat(n)
  const line = JSON.stringify(makeRecord('deep-1')).replace(/}$/, `,"x":${deep(100_000)}}`)
  const body = [JSON.stringify(makeRecord('ok-1')), line, JSON.stringify(makeRecord('ok-2'))].join('\n')
  const res = await post(`${s.url}/http/editor-audit`, body)
  t.equal(res.status, 200)
  t.same({ a: res.body.accepted, r: res.body.rejected }, { a: 2, r: 1 })
  t.match(res.body.errors[0], { index: 1, line: 2, message: /nested deeper than 64 levels/ })
  const rejected = await storedLines(dataDir, '_rejected')
  t.equal(JSON.parse(rejected[0]!.text).raw, line, 'an NDJSON line is kept as its text')

  const arr = `[${JSON.stringify(makeRecord('ok-3'))},${deep(50_000)}]`
  const res2 = await post(`${s.url}/http/editor-audit`, arr)
  t.same({ a: res2.body.accepted, r: res2.body.rejected }, { a: 1, r: 1 })
  const cut = JSON.parse((await storedLines(dataDir, '_rejected'))[1]!.text).raw
  t.match(JSON.stringify(cut), /nested deeper than 64 levels: cut/, 'an array element is kept cut at 64 levels')
  // 64 levels exactly is fine.
  const ok = makeRecord('depth-64', undefined, { x: JSON.parse(deep(63)) })
  t.equal((await post(`${s.url}/http/editor-audit`, JSON.stringify(ok))).body.accepted, 1)
})
