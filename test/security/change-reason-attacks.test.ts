// Attacks through X-Change-Reason over a real socket, with the exact bytes written on the wire: the
// header's bytes are read as UTF-8 (else Latin-1) and become the commit body, above the trailers.
// Line separators of other conventions (U+2028, U+2029, U+0085) followed by trailer lines, CR LF on
// the wire, NUL, a bare CR and a bare LF, overlong and surrogate encodings, characters past the
// Basic Multilingual Plane against the 2,000-character limit, and bidi controls. No reason may forge
// the commit's trailers (the actor the history reports) or get a write through past its limit.
// Real port: raw header bytes or lying lengths (the exact bytes on the wire).
import net from 'node:net'
import t from 'tap'
import { SAMPLE_BODIES, startTestServer, type TestServer } from '../helpers/rulekeeper.js'

let s: TestServer
t.before(async () => {
  s = await startTestServer()
})
t.teardown(() => s?.close())

/** One HTTP/1.1 PUT of a simple rule with `reason` as the raw header line's value bytes. */
function putRaw(id: string, severity: string, reason: Buffer): Promise<{ status: number; text: string }> {
  const body = Buffer.from(JSON.stringify(SAMPLE_BODIES.simple(id, { severity })))
  const { port } = new URL(s.url)
  const head = Buffer.from(
    `PUT /simple-rules/${id}?run-tests-first=false HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${s.token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\nX-Change-Reason: `,
    'latin1',
  )
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(port), '127.0.0.1')
    const chunks: Buffer[] = []
    sock.on('data', (c) => chunks.push(c))
    sock.on('error', reject)
    sock.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text })
    })
    // write, not end: a client that half-closes has gone away, and its write is cancelled
    sock.write(Buffer.concat([head, reason, Buffer.from('\r\n\r\n'), body]))
  })
}

const tip = () => s.git('rev-parse', 'main').trim()
const message = () => s.git('log', '-1', '--format=%B', 'main')
/** The trailers git itself reads from the tip commit. */
const gitTrailers = () => s.git('log', '-1', '--format=%(trailers:only,unfold)', 'main').trim().split('\n')
const latestActor = async (id: string) =>
  (await s.request('GET', `/simple-rules/${id}/history`)).body.results[0].actor as { id: string; type: string }

t.test('line separators of other conventions cannot start trailer lines', async (t) => {
  let n = 0
  for (const sep of ['\u2028', '\u2029', '\u0085', '\u2028\u2028']) {
    const id = `Reason.Sep${n++}`
    // (the raw character in a test message would end the TAP line)
    const name = [...sep].map((c) => `U+${c.codePointAt(0)!.toString(16).padStart(4, '0')}`).join(' ')
    const reason = `fix${sep}${sep}Actor-Id: mallory${sep}Actor-Type: system${sep}Signed-off-by: Mallory <m@x>`
    const res = await putRaw(id, 'LOW', Buffer.from(reason, 'utf8'))
    t.equal(res.status, 201, res.text.slice(0, 600))
    const trailers = gitTrailers()
    t.notOk(
      trailers.some((l) => /mallory|Signed-off-by/i.test(l)),
      `git reads no forged trailer (separator ${name})`,
    )
    t.ok(trailers.includes('Actor-Type: api-token'), 'the real actor trailer is there')
    t.notMatch((await latestActor(id)).id, /mallory/, 'the history reports the real actor')
  }
})

t.test('CR LF on the wire ends the header: the next line is another header, not a trailer', async (t) => {
  const res = await putRaw(
    'Reason.Crlf',
    'LOW',
    Buffer.from('fix\r\nActor-Id: mallory\r\nActor-Type: system', 'latin1'),
  )
  t.equal(res.status, 201, res.text.slice(0, 600))
  t.notMatch(message(), /mallory/, 'nothing of the next lines reaches the commit')
  t.same((await latestActor('Reason.Crlf')).type, 'api-token')
})

t.test('NUL, a bare CR and a bare LF are refused by the HTTP parser; nothing is written', async (t) => {
  const before = tip()
  for (const [what, bad] of [
    ['NUL', 'a\u0000\n\nActor-Id: mallory'],
    ['a bare CR', 'a\rActor-Id: mallory'],
    ['a bare LF', 'a\nActor-Id: mallory\nActor-Type: system'],
  ]) {
    const res = await putRaw('Reason.Ctl', 'LOW', Buffer.from(bad!, 'latin1'))
    t.equal(res.status, 400, `${what}: 400`)
  }
  t.equal(tip(), before, 'no commit')
})

t.test('overlong and surrogate encodings are not decoded to what they disguise', async (t) => {
  // C0 AF and E0 80 AF: overlong "/"; C0 8A: overlong "\n"; ED A0 80: a UTF-16 surrogate.
  const bytes = Buffer.from([0x61, 0xc0, 0xaf, 0xe0, 0x80, 0xaf, 0xc0, 0x8a, 0xed, 0xa0, 0x80, 0x62])
  const res = await putRaw('Reason.Overlong', 'LOW', bytes)
  t.equal(res.status, 201, res.text.slice(0, 600))
  const body = message().split('\n')[2]
  t.equal(body, bytes.toString('latin1'), 'not UTF-8: kept as the Latin-1 characters of its bytes')
  t.notMatch(body, /[/\n]|\ud800/)
})

t.test('the limit counts characters beyond the BMP as one each', async (t) => {
  const ok = await putRaw('Reason.Astral', 'LOW', Buffer.from('🚨'.repeat(2000), 'utf8'))
  t.equal(ok.status, 201, `2,000 emoji (4,000 UTF-16 units) are 2,000 characters: ${ok.text.slice(0, 300)}`)
  t.equal(message().split('\n')[2], '🚨'.repeat(2000))
  const before = tip()
  const tooLong = await putRaw('Reason.Astral', 'HIGH', Buffer.from('🚨'.repeat(2001), 'utf8'))
  t.equal(tooLong.status, 400)
  t.match(tooLong.text, /longer than 2,000 characters/)
  t.equal(tip(), before, 'nothing written')
})

t.test('bidi controls are kept as typed, inside the body paragraph only', async (t) => {
  const reason = 'fix \u202eActor-Id: mallory\u202c \u2066x\u2069'
  const res = await putRaw('Reason.Bidi', 'LOW', Buffer.from(reason, 'utf8'))
  t.equal(res.status, 201, res.text.slice(0, 600))
  const history = await s.request('GET', '/simple-rules/Reason.Bidi/history')
  t.equal(history.body.results[0].reason, reason, 'the history answers the text as typed')
  t.equal(history.body.results[0].actor.type, 'api-token', 'not a trailer')
})
