// What a start finds after a crash: torn tails are moved to _rejected with their bytes and cut from
// the data file, never joined to the next good line; a new file is started on every start and when
// a file passes the roll size.
import { appendFile, readFile, stat, writeFile, mkdir } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { startIngestInProcess } from './fixtures/ingest-in-process.js'
import { TOKEN, makeRecord, ndjson, storeFiles, storedLines, storedRecords, tempDataDir } from './helpers.js'

const env = { RULEKEEPER_EDITOR_AUDIT_TOKEN: TOKEN }

t.test('a torn tail is isolated on the next start and the rest stays intact', async (t) => {
  const dataDir = await tempDataDir(t)
  const s1 = await startIngestInProcess({ dataDir, env })
  t.equal((await s1.post('/http/editor-audit', ndjson([makeRecord('t-1'), makeRecord('t-2')]))).body.accepted, 2)
  await s1.close()
  const [dataFile] = (await storeFiles(dataDir)).filter((f) => !f.includes('_rejected'))
  const goodSize = (await stat(dataFile!)).size
  // What a write interrupted mid-line leaves: the first part of the next record, with a bad byte.
  const torn = Buffer.concat([Buffer.from(JSON.stringify(makeRecord('t-3')).slice(0, 70)), Buffer.from([0xc3])])
  await appendFile(dataFile!, torn)

  const s2 = await startIngestInProcess({ dataDir, env })
  t.teardown(() => s2.close())
  t.equal((await stat(dataFile!)).size, goodSize, 'the data file is cut back to its last complete line')
  const rejected = await storedLines(dataDir, '_rejected')
  t.equal(rejected.length, 1)
  const r = JSON.parse(rejected[0]!.text)
  t.match(r.error, /torn tail/)
  t.equal(r.offset, goodSize)
  t.equal(r.file, path.relative(path.join(dataDir, 'logs'), dataFile!))
  t.same(Buffer.from(r.rawBase64, 'base64'), torn, 'the torn bytes are kept exactly')
  t.ok(r.raw.endsWith('\udcc3'), 'and readable, the bad byte escaped')

  // The torn record was never acknowledged: the sender's retry stores it, in a new file.
  const retry = await s2.post('/http/editor-audit', ndjson([makeRecord('t-2'), makeRecord('t-3')]))
  t.same({ a: retry.body.accepted, d: retry.body.duplicates }, { a: 1, d: 1 })
  const stored = await storedRecords(dataDir)
  t.same(stored.map((x) => x.record.metadata.id).sort(), ['t-1', 't-2', 't-3'])
  t.equal(new Set(stored.map((x) => x.file)).size, 2, 'a new file after the restart, the torn one is not appended to')
  for (const f of await storeFiles(dataDir)) {
    const text = await readFile(f, 'utf8')
    t.ok(text === '' || text.endsWith('\n'), `${path.basename(f)} ends with a complete line`)
    for (const line of text.split('\n').filter(Boolean)) t.doesNotThrow(() => JSON.parse(line))
  }
})

t.test('torn tails with no complete line, and in a rejected file, are isolated too', async (t) => {
  const dataDir = await tempDataDir(t)
  const logs = path.join(dataDir, 'logs')
  const dataFile = path.join(
    logs,
    'Editor.Audit',
    'dt=2026-11-20',
    'hour=08',
    'editor-audit-20261120T080000Z-abcdef-000001.ndjson',
  )
  const rejFile = path.join(
    logs,
    '_rejected',
    'Editor.Audit',
    'dt=2026-11-20',
    'editor-audit-20261120T080000Z-abcdef-000002.ndjson',
  )
  const otherSource = path.join(
    logs,
    'Editor.Audit',
    'dt=2026-11-20',
    'hour=08',
    'other-source-20261120T080000Z-abcdef-000001.ndjson',
  )
  for (const f of [dataFile, rejFile, otherSource]) await mkdir(path.dirname(f), { recursive: true })
  await writeFile(dataFile, '{"ip_address":"203.0')
  await writeFile(rejFile, '{"error":"x","raw":1}\n{"error":"y","ra')
  await writeFile(otherSource, '{"not":"mine')
  const s = await startIngestInProcess({ dataDir, env })
  await s.close()
  t.equal((await stat(dataFile)).size, 0)
  t.equal(await readFile(rejFile, 'utf8'), '{"error":"x","raw":1}\n')
  t.equal(await readFile(otherSource, 'utf8'), '{"not":"mine', "another source's files are left to it")
  const torn = (await storedLines(dataDir, '_rejected'))
    .map((l) => JSON.parse(l.text))
    .filter((r) => /torn/.test(r.error))
  t.same(torn.map((r) => r.raw).sort(), ['{"error":"y","ra', '{"ip_address":"203.0'])

  // A second start finds nothing more to do: isolation is not repeated.
  const again = await startIngestInProcess({ dataDir, env })
  await again.close()
  t.equal((await storedLines(dataDir, '_rejected')).filter((l) => /torn/.test(l.text)).length, 2)
})

t.test('files roll past the size limit and on every start', async (t) => {
  const dataDir = await tempDataDir(t)
  const overrides = { audit: { fileRollBytes: 4000 } }
  const s1 = await startIngestInProcess({ dataDir, env, overrides })
  for (let i = 0; i < 10; i++) {
    t.equal(
      (await s1.post('/http/editor-audit', ndjson([makeRecord(`roll-${i}-a`), makeRecord(`roll-${i}-b`)]))).status,
      200,
    )
  }
  await s1.close()
  const files1 = await storeFiles(dataDir)
  t.ok(files1.length >= 3, `several files (${files1.length})`)
  for (const f of files1.slice(0, -1)) t.ok((await stat(f)).size >= 4000, 'a closed file reached the roll size')
  const s2 = await startIngestInProcess({ dataDir, env, overrides })
  t.teardown(() => s2.close())
  await s2.post('/http/editor-audit', JSON.stringify(makeRecord('roll-after')))
  const files2 = await storeFiles(dataDir)
  t.equal(files2.length, files1.length + 1, 'the restart started a new file')
  t.equal((await storedRecords(dataDir)).length, 21)
})

t.test('a partition folder deleted by retention is made again for a late event', async (t) => {
  const dataDir = await tempDataDir(t)
  // A tiny roll size closes each file after its batch, as the idle timer would after 10 minutes.
  const s = await startIngestInProcess({ dataDir, env, overrides: { audit: { fileRollBytes: 100 } } })
  t.teardown(() => s.close())
  t.equal((await s.post('/http/editor-audit', JSON.stringify(makeRecord('ret-1', '2025-01-01T00:00:00Z')))).status, 200)
  const { rm } = await import('node:fs/promises')
  await rm(path.join(dataDir, 'logs', 'Editor.Audit', 'dt=2025-01-01'), { recursive: true })
  const late = await s.post('/http/editor-audit', JSON.stringify(makeRecord('ret-2', '2025-01-01T00:30:00Z')))
  t.equal(late.status, 200)
  t.same(
    (await storedRecords(dataDir)).map((x) => [path.dirname(x.file), x.record.metadata.id]),
    [['Editor.Audit/dt=2025-01-01/hour=00', 'ret-2']],
  )
})

t.test('a failed write answers 503 and stops the source until a restart', async (t) => {
  const dataDir = await tempDataDir(t)
  const s = await startIngestInProcess({ dataDir, env })
  t.equal((await s.post('/http/editor-audit', JSON.stringify(makeRecord('f-1')))).status, 200)
  // A plain file where the partition folder must go: mkdir fails under the writer.
  await writeFile(path.join(dataDir, 'logs', 'Editor.Audit', 'dt=2030-01-01'), 'in the way')
  const failed = await s.post('/http/editor-audit', JSON.stringify(makeRecord('f-2', '2030-01-01T00:00:00Z')))
  t.equal(failed.status, 503)
  t.match(failed.body.message, /failed to write/)
  const after = await s.post('/http/editor-audit', JSON.stringify(makeRecord('f-3')))
  t.equal(after.status, 503, 'later deliveries are refused, not half-stored')
  await s.close()
  await (await import('node:fs/promises')).rm(path.join(dataDir, 'logs', 'Editor.Audit', 'dt=2030-01-01'))
  const s2 = await startIngestInProcess({ dataDir, env })
  t.teardown(() => s2.close())
  const retry = await s2.post(
    '/http/editor-audit',
    ndjson([makeRecord('f-1'), makeRecord('f-2', '2030-01-01T00:00:00Z'), makeRecord('f-3')]),
  )
  t.same(
    { a: retry.body.accepted, d: retry.body.duplicates },
    { a: 2, d: 1 },
    'after a restart the retry stores what was refused',
  )
})
