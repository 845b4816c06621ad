// A generated corpus of malformed deliveries (not JSON, truncated JSON and gzip, random bytes, gzip
// bombs, oversized bodies, foreign encodings and compressions, bad tokens): every one answers a 4xx
// with a message, the server keeps serving, memory stays bounded, and the store stays empty.
// Real port: raw header bytes or lying lengths (malformed deliveries) and the memory of a real server.
import { gzipSync } from 'node:zlib'
import t from 'tap'
import { mulberry32 } from '../helpers/seeded-random.js'
import { startIngestServer } from './fixtures/ingest-app.js'
import { TOKEN, makeRecord, post, storeFiles, tempDataDir } from './helpers.js'

const COUNT = Number(process.env.AUDIT_BAD_INPUT_COUNT ?? 2000)

// A seeded generator keeps a failure reproducible.
const random = mulberry32(12345)
const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)]!
const randomBytes = (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(random() * 256)))
const randomText = (n: number) =>
  Array.from({ length: n }, () => pick(['a', '{', '}', '[', ']', '"', ':', ',', ' ', '\n', 'x', '\\', 'é'])).join('')

/** True when not a single record could be read from the text: the body must answer 4xx. */
function unreadable(text: string): boolean {
  const parses = (s: string) => {
    try {
      JSON.parse(s)
      return true
    } catch {
      return false
    }
  }
  if (parses(text)) return false
  return text.split('\n').every((line) => line.trim() === '' || !parses(line))
}

interface Case {
  kind: string
  body: Buffer
  headers: Record<string, string>
}

const auth = { authorization: `Bearer ${TOKEN}` }
const bomb = gzipSync(Buffer.alloc(40 * 1024 * 1024, 0x7b))
const validLine = JSON.stringify(makeRecord('corpus'))

function generate(): Case {
  const kind = pick([
    'text',
    'bytes',
    'truncated',
    'gzip-bytes',
    'gzip-truncated',
    'bomb',
    'big',
    'token',
    'utf16',
    'encoding',
    'deep',
    'scalar',
  ])
  switch (kind) {
    case 'text': {
      let s = randomText(1 + Math.floor(random() * 400))
      while (!unreadable(s)) s = randomText(1 + Math.floor(random() * 400))
      return { kind, body: Buffer.from(s), headers: auth }
    }
    case 'bytes': {
      let b = randomBytes(8 + Math.floor(random() * 2000))
      while (!unreadable(b.toString('latin1'))) b = randomBytes(8 + Math.floor(random() * 2000))
      return { kind, body: b, headers: auth }
    }
    case 'truncated':
      return {
        kind,
        body: Buffer.from(validLine.slice(0, Math.floor(random() * (validLine.length - 1)))),
        headers: auth,
      }
    case 'gzip-bytes':
      return {
        kind,
        body: Buffer.concat([Buffer.from([0x1f, 0x8b]), randomBytes(50 + Math.floor(random() * 500))]),
        headers: auth,
      }
    case 'gzip-truncated': {
      const gz = gzipSync(`${validLine}\n${validLine}`)
      return { kind, body: gz.subarray(0, 10 + Math.floor(random() * (gz.length - 20))), headers: auth }
    }
    case 'bomb':
      return random() < 0.1 ? { kind, body: bomb, headers: auth } : generate()
    case 'big':
      return { kind, body: Buffer.alloc(1024 * 1024 + 1 + Math.floor(random() * 100_000), 0x20), headers: auth }
    case 'token':
      return {
        kind,
        body: Buffer.from(validLine),
        headers: pick<Record<string, string>>([
          {},
          { authorization: `Bearer ${randomText(20).replace(/\s/g, '')}x` },
          { 'x-api-key': TOKEN },
          { authorization: 'Bearer' },
        ]),
      }
    case 'utf16':
      return { kind, body: Buffer.from(validLine, 'utf16le'), headers: auth }
    case 'encoding':
      return {
        kind,
        body: Buffer.from(validLine),
        headers: { ...auth, 'content-encoding': pick(['br', 'deflate', 'zstd', 'compress']) },
      }
    case 'deep': {
      const n = 10 + Math.floor(random() * 100_000)
      return { kind, body: Buffer.from(`${'['.repeat(n)}"`), headers: auth }
    }
    default:
      return { kind, body: Buffer.from(pick(['', ' ', '\n\n', '42', 'null', 'true', '"x"', '[]'])), headers: auth }
  }
}

t.test(`${COUNT} malformed deliveries each answer a 4xx and store nothing`, async (t) => {
  const dataDir = await tempDataDir(t)
  const s = await startIngestServer({ dataDir, env: { RULEKEEPER_EDITOR_AUDIT_TOKEN: TOKEN } })
  t.teardown(() => s.close())
  const statuses = new Map<string, Set<number>>()
  const failures: string[] = []
  let peakRss = 0
  const rssBefore = process.memoryUsage().rss
  for (let i = 0; i < COUNT; i++) {
    const c = generate()
    const res = await post(`${s.url}/http/editor-audit`, c.body, c.headers)
    if (res.status < 400 || res.status >= 500 || typeof res.body?.message !== 'string' || res.body.message === '') {
      failures.push(`#${i} ${c.kind}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`)
    }
    if (!statuses.has(c.kind)) statuses.set(c.kind, new Set())
    statuses.get(c.kind)!.add(res.status)
    if (i % 50 === 0) peakRss = Math.max(peakRss, process.memoryUsage().rss)
  }
  t.same(failures.slice(0, 10), [], 'every malformed delivery answered 4xx with a message')
  t.comment([...statuses].map(([k, v]) => `${k}: ${[...v].sort().join('/')}`).join(', '))
  t.same(await storeFiles(dataDir), [], 'the log store is unchanged')
  t.ok(
    peakRss - rssBefore < 400 * 1024 * 1024,
    `memory stayed bounded (+${Math.round((peakRss - rssBefore) / 1048576)} MiB)`,
  )
  const ok = await post(`${s.url}/http/editor-audit`, validLine)
  t.equal(ok.status, 200, 'and the server still serves')
})
