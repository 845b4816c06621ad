// With a remote: the git token and password (from the environment or from userinfo in the URL), a
// wrong token, the webhook secret and the API token never appear in any log line or any response,
// through writes, webhooks, reconciles, an outage, refused credentials and restarts.
// Real port: a remote (the git server).
import t from 'tap'
import { httpRequest, SAMPLE_BODIES, tempDir, type ApiResponse, type TestServer } from '../helpers/rulekeeper.js'
import { GIT_TOKEN, GIT_USER, hubSignature, pushHook, remoteWorld, WEBHOOK_SECRET } from './remote-fixture.js'

const WRONG_TOKEN = 'ghp_WRONGTOKEN_zz99yy88xx77'
const NO_TESTS = '?run-tests-first=false'

t.test('credentials never appear in a log line or a response', async (t) => {
  t.setTimeout(120_000)
  const w = await remoteWorld(t)
  const logLines: string[] = []
  const responses: Array<{ what: string; res: ApiResponse }> = []
  const apiTokens: string[] = []
  const record = async (what: string, p: Promise<ApiResponse>) => {
    const res = await p
    responses.push({ what, res })
    return res
  }
  const exercise = async (s: TestServer, label: string) => {
    await record(`${label} status`, s.request('GET', '/status'))
    await record(`${label} reconcile`, s.request('POST', '/reconcile'))
    await record(
      `${label} create`,
      s.request('POST', `/simple-rules${NO_TESTS}`, SAMPLE_BODIES.simple(`Secret.${label}`)),
    )
    await record(
      `${label} update`,
      s.request(
        'PUT',
        `/simple-rules/Secret.${label}${NO_TESTS}`,
        SAMPLE_BODIES.simple(`Secret.${label}`, { severity: 'LOW' }),
      ),
    )
    await record(`${label} read`, s.request('GET', `/simple-rules/Secret.${label}`))
    await record(`${label} list`, s.request('GET', '/simple-rules'))
    await record(`${label} status again`, s.request('GET', '/status'))
  }

  // 1. Credentials from the environment: normal work, webhooks, an outage.
  const dataDir = tempDir()
  const a = await w.startServer({ dataDir, logLines })
  apiTokens.push(a.token)
  await exercise(a, 'A')
  await record('A webhook', pushHook(a, await w.remote.head()))
  const body = JSON.stringify({ after: 'x' })
  await record(
    'A bad webhook',
    httpRequest(a.url, 'POST', '/hooks/git', body, {
      'Content-Type': 'application/json',
      'X-Hub-Signature-256': hubSignature('wrong', body),
    }),
  )
  await w.git.stop()
  await exercise(a, 'Down')
  await w.git.start()
  await exercise(a, 'Up')
  await a.close()

  // 2. Same data directory, a wrong token.
  const b = await w.startServer({ dataDir, logLines, env: { RULEKEEPER_GIT_TOKEN: WRONG_TOKEN } })
  apiTokens.push(b.token)
  await exercise(b, 'Wrong')
  const wrongStatus = responses.find((r) => r.what === 'Wrong status again')!.res
  t.equal(
    wrongStatus.body?.conditions?.find((c: { type: string }) => c.type === 'Stalled')?.status,
    'True',
    'the wrong token stalls the reconciler',
  )
  await b.close()

  // 3. Credentials as userinfo in the URL (no credential variables).
  const userinfoUrl = w.git.authUrl('rules', GIT_USER, GIT_TOKEN)
  const c = await w.startServer({
    logLines,
    env: { RULEKEEPER_GIT_URL: userinfoUrl, RULEKEEPER_GIT_USERNAME: '', RULEKEEPER_GIT_TOKEN: '' },
  })
  apiTokens.push(c.token)
  await exercise(c, 'Userinfo')
  const cStatus = responses.find((r) => r.what === 'Userinfo status')!.res
  t.equal(cStatus.body?.remote?.url, w.git.url('rules'), 'status shows the URL without userinfo')
  t.equal(responses.find((r) => r.what === 'Userinfo create')!.res.status, 200, 'userinfo credentials work')
  await c.close()

  // Sanity: the scenario did what it should, and the logs were captured and talk about the remote.
  t.equal(responses.find((r) => r.what === 'A create')!.res.status, 200)
  t.equal(responses.find((r) => r.what === 'Down create')!.res.status, 503)
  t.equal(responses.find((r) => r.what === 'Up create')!.res.status, 200)
  t.equal(responses.find((r) => r.what === 'A bad webhook')!.res.status, 401)
  t.ok(logLines.length > 10, `log lines were captured (${logLines.length})`)
  t.ok(
    logLines.some((l) => l.includes(`127.0.0.1:${w.git.port}`)),
    'some log line names the remote',
  )

  const basic = Buffer.from(`${GIT_USER}:${GIT_TOKEN}`).toString('base64')
  const wrongBasic = Buffer.from(`${GIT_USER}:${WRONG_TOKEN}`).toString('base64')
  const secrets: Array<[string, string]> = [
    ['the git token', GIT_TOKEN],
    ['the git token, URL-encoded', encodeURIComponent(GIT_TOKEN)],
    ['the wrong git token', WRONG_TOKEN],
    ['the Basic authorization value', basic],
    ['the wrong Basic authorization value', wrongBasic],
    ['the webhook secret', WEBHOOK_SECRET],
    ['userinfo of the URL', `${GIT_USER}:${GIT_TOKEN}@`],
    ...apiTokens.map((tok, i): [string, string] => [`API token ${i}`, tok]),
  ]
  for (const [name, secret] of secrets) {
    const inLogs = logLines.filter((l) => l.includes(secret))
    t.same(inLogs, [], `${name} is in no log line`)
    const inResponses = responses
      .filter(({ res }) => res.text.includes(secret) || [...res.headers.entries()].some(([, v]) => v.includes(secret)))
      .map((r) => r.what)
    t.same(inResponses, [], `${name} is in no response`)
  }
})
