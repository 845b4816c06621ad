// X-Change-Reason over a real socket: a header carries bytes, so a reason in any script is sent as
// its UTF-8 bytes (what curl sends from a UTF-8 terminal, and the console); the commit message then
// holds the text as typed. Bytes that are not UTF-8 are Latin-1 (an ISO-8859-1 client), pure ASCII
// is unchanged, and the 2,000-character limit counts characters, not bytes.
// Real port: raw header bytes or lying lengths (header bytes as a client writes them).
import t from 'tap'
import { rawRequest } from '../helpers/raw-http.js'
import { SAMPLE_BODIES, startTestServer, type TestServer } from '../helpers/rulekeeper.js'

let s: TestServer
t.before(async () => {
  s = await startTestServer()
})
t.teardown(() => s?.close())

/** A PUT (a create: 201) of the rule with `reasonBytes` as the header's exact bytes; the status and the commit's body. */
async function putWithReason(id: string, severity: string, reasonBytes: Buffer) {
  const body = Buffer.from(JSON.stringify(SAMPLE_BODIES.simple(id, { severity })))
  const res = await rawRequest(`${s.url}/simple-rules/${encodeURIComponent(id)}?run-tests-first=false`, {
    method: 'PUT',
    // node:http writes a header string as Latin-1: one byte per character, so these are the bytes sent.
    headers: {
      'X-API-Key': s.token,
      'Content-Type': 'application/json',
      'Content-Length': body.length,
      'X-Change-Reason': reasonBytes.toString('latin1'),
    },
    body,
  })
  return { status: res.status, text: res.text, message: s.git('log', '-1', '--format=%b', 'main') }
}

t.test('UTF-8 bytes (Latin-1 letters and beyond) arrive in the commit as typed', async (t) => {
  const reason = 'Réglage für Zürich — ✓ 東京 🚨'
  const r = await putWithReason('Reason.Utf8', 'LOW', Buffer.from(reason, 'utf8'))
  t.equal(r.status, 201, r.text)
  t.equal(r.message.split('\n')[0], reason)
  const history = await s.request('GET', '/simple-rules/Reason.Utf8/history')
  t.equal(history.body.results[0].reason, reason, 'the history answers it as typed')
})

t.test('Latin-1 bytes (not UTF-8) are read as Latin-1', async (t) => {
  const reason = 'Réglage für Zürich: 5 £ ± ½ ÿ'
  const r = await putWithReason('Reason.Latin1', 'LOW', Buffer.from(reason, 'latin1'))
  t.equal(r.status, 201, r.text)
  t.equal(r.message.split('\n')[0], reason)
})

t.test('ASCII is unchanged', async (t) => {
  const r = await putWithReason('Reason.Ascii', 'LOW', Buffer.from('plain reason, SEC-42'))
  t.equal(r.status, 201, r.text)
  t.equal(r.message.split('\n')[0], 'plain reason, SEC-42')
})

t.test('the limit counts characters: 2,000 three-byte characters pass, 2,001 are a 400', async (t) => {
  const ok = await putWithReason('Reason.Long', 'LOW', Buffer.from('✓'.repeat(2000), 'utf8'))
  t.equal(ok.status, 201, ok.text)
  t.equal(ok.message.split('\n')[0], '✓'.repeat(2000))
  const head = s.git('rev-parse', 'main')
  const tooLong = await putWithReason('Reason.Long', 'HIGH', Buffer.from('✓'.repeat(2001), 'utf8'))
  t.equal(tooLong.status, 400)
  t.match(JSON.parse(tooLong.text).message, /longer than 2,000 characters/)
  t.equal(s.git('rev-parse', 'main'), head, 'nothing written')
})
