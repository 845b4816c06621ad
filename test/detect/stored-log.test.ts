// Reading the stored log (stored-log.ts) against a model: random data files, each in acceptance
// order (p_parse_time, p_row_id rising) with equal keys across files, non-ASCII text, blank and
// non-object lines, lines longer than a read chunk and a last line without newline, read from
// offsets in the middle with small chunks. The merge must give every record once, in the model's
// order (key, then file, then offset), with byte offsets that point at the line. Seeded (the seed is
// printed) so a failure reproduces.
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { LineCursor, type StoredRecord } from '../../src/detect/stored-log.js'
import { mergeBatches, mergeCursors, StoredLogMerge } from '../../src/detect/stored-merge.js'
import { tempDir } from '../helpers/rulekeeper.js'
import { SeededRandom } from '../helpers/seeded-random.js'

const seed = Number(process.env.SEED ?? Date.now() % 1_000_000)
const rnd = new SeededRandom(seed)

interface Line {
  file: string
  offset: number
  next: number
  record: Record<string, unknown> | null
}

/** Writes `files` data files; returns every line with its byte range (record null: not a record). */
async function writeFiles(root: string, files: number, perFile: number): Promise<Line[]> {
  const lines: Line[] = []
  for (let f = 0; f < files; f++) {
    const file = path.join('Editor.Audit', 'dt=2026-11-20', `hour=${String(f).padStart(2, '0')}`, `w${f}.ndjson`)
    await mkdir(path.join(root, path.dirname(file)), { recursive: true })
    const parts: Buffer[] = []
    let offset = 0
    let ms = Date.UTC(2026, 10, 21)
    let row = 0
    const push = (text: string, record: Record<string, unknown> | null) => {
      const b = Buffer.from(`${text}\n`)
      parts.push(b)
      lines.push({ file, offset, next: offset + b.length, record })
      offset += b.length
    }
    for (let i = 0; i < perFile; i++) {
      const roll = rnd.int(100)
      if (roll < 3) push('', null)
      else if (roll < 5) push(rnd.bool() ? '[1,2]' : '{"broken": ', null)
      else {
        ms += rnd.int(3) // equal parse times within a file and across files
        if (rnd.bool(0.3)) row++
        const record: Record<string, unknown> = {
          p_log_type: 'Editor.Audit',
          p_parse_time: new Date(ms).toISOString(),
          p_row_id: `r${String(row).padStart(6, '0')}`, // equal keys across files: file, then offset decide
          i,
          text: rnd.bool(0.1) ? 'Zoë 日本語 🙂 über' : rnd.str(rnd.int(20)),
          ...(rnd.bool(0.02) ? { long: 'x'.repeat(300 + rnd.int(400)) } : {}),
        }
        push(JSON.stringify(record), record)
      }
    }
    const tail = Buffer.from('{"p_parse_time":"2026-11-21T00:00:00.000Z","p_row_id":"unfinished"')
    await writeFile(path.join(root, file), Buffer.concat([...parts, tail]))
  }
  return lines
}

const keyOf = (r: Record<string, unknown>) => [String(r.p_parse_time), String(r.p_row_id)] as const
function modelOrder(lines: Line[]): Line[] {
  return lines
    .filter((l) => l.record !== null)
    .sort((a, b) => {
      const [ap, ar] = keyOf(a.record!)
      const [bp, br] = keyOf(b.record!)
      if (ap !== bp) return ap < bp ? -1 : 1
      if (ar !== br) return ar < br ? -1 : 1
      if (a.file !== b.file) return a.file < b.file ? -1 : 1
      return a.offset - b.offset
    })
}

const seen = (r: StoredRecord) => ({ file: r.file, offset: r.offset, next: r.next, record: r.record })

t.test(`the merge gives the model's order and offsets (seed ${seed})`, async (t) => {
  const root = tempDir('rk-stored-log-')
  const lines = await writeFiles(root, 7, 400)
  const files = [...new Set(lines.map((l) => l.file))]
  const size = (f: string) => {
    const ls = lines.filter((l) => l.file === f)
    return ls[ls.length - 1]!.next + 20 // into the unfinished last line: it is never read
  }
  for (const chunk of [64, 1000, 1 << 20]) {
    // from the start, and from a line boundary in the middle (a checkpoint) of some files
    const starts = new Map(
      files.map((f) => {
        const ls = lines.filter((l) => l.file === f)
        return [f, rnd.bool() ? 0 : ls[rnd.int(ls.length)]!.offset] as const
      }),
    )
    const want = modelOrder(lines.filter((l) => l.offset >= starts.get(l.file)!)).map(
      ({ file, offset, next, record }) => ({ file, offset, next, record }),
    )
    const cursors = () => files.map((f) => new LineCursor(root, f, starts.get(f)!, size(f), chunk))
    const got: ReturnType<typeof seen>[] = []
    for await (const r of mergeCursors(cursors())) got.push(seen(r))
    t.equal(got.length, want.length, `chunk ${chunk}: every record once`)
    t.same(got, want, `chunk ${chunk}: stored order, offsets and records`)
    const batches: number[] = []
    const viaBatches: ReturnType<typeof seen>[] = []
    for await (const b of mergeBatches(cursors(), 50)) {
      batches.push(b.length)
      for (const r of b) viaBatches.push(seen(r))
    }
    t.same(viaBatches, want, `chunk ${chunk}: the same through batches`)
    t.ok(
      batches.every((n) => n >= 1 && n <= 50),
      'batches hold 1 to 50 records',
    )
  }
  // The key of a record is its two order fields.
  const merge = new StoredLogMerge([new LineCursor(root, files[0]!, 0, size(files[0]!))])
  t.ok(await merge.read())
  const first = merge.next()!
  t.equal(first.key, `${first.record.p_parse_time}\u0000${first.record.p_row_id}`)
})

t.test('each offset points at its line; skipped lines are counted', async (t) => {
  const root = tempDir('rk-stored-log-')
  const lines = await writeFiles(root, 1, 300)
  const file = lines[0]!.file
  const end = lines[lines.length - 1]!.next
  const c = new LineCursor(root, file, 0, end, 100)
  const got: Line[] = []
  for (let r = await c.peek(); r !== null; r = await c.peek()) {
    got.push(seen(r))
    c.take()
  }
  t.same(
    got,
    lines.filter((l) => l.record !== null),
  )
  t.equal(c.skipped, lines.filter((l) => l.record === null && l.next - l.offset > 1).length, 'non-object lines')
})

t.test('a file shorter than announced ends the cursor', async (t) => {
  const root = tempDir('rk-stored-log-')
  await writeFile(path.join(root, 'short.ndjson'), '{"p_parse_time":"a","p_row_id":"1"}\n')
  const c = new LineCursor(root, 'short.ndjson', 0, 10_000, 16)
  const r = await c.peek()
  t.equal(r?.record.p_row_id, '1')
  c.take()
  t.equal(await c.peek(), null)
})
