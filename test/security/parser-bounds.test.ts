// Parsers that cannot take the process down or block it (issue 11): hostile YAML texts sent to a
// real `rulekeeper serve` child process (deep flow and block nesting that crashed V8, alias bombs
// that cost seconds) are answered 4xx quickly, the server keeps serving and nothing is stored;
// under several concurrent attackers GET /healthz keeps a median under 100 ms. Then the per-rule
// limits (rules.maxFileBytes, rules.maxTests) at and one past the limit, on an in-process server.
// Real port: a second process (a child `rulekeeper serve` that V8 crashes or blocks).
import { readFileSync } from 'node:fs'
import t, { type Test as TapTest } from 'tap'
import { startChild, type ChildServer } from '../helpers/child-server.js'
import { startInProcess } from '../helpers/in-process.js'
import { httpRequest, SAMPLE_BODIES, tempDir, type ApiResponse } from '../helpers/rulekeeper.js'

const TOKEN = 'rk-parser-bounds-bootstrap-token-0123456789'
/**
 * The cost of one hostile answer is the server's CPU time for it (read from /proc, so other work
 * on the machine does not move it): measured 5–360 ms alone. The wall clock only has to show an
 * answer, not a hang: under a full parallel suite it reached 1.5 s for a 360 ms answer.
 */
const QUICK_CPU_MS = 1000
const ANSWER_MS = 10_000

const bigList = (n: number) => Array.from({ length: n }, (_, i) => `v${String(i).padStart(6, '0')}`).join(', ')
/** A large anchored condition aliased 99 times: ~24 MB once expanded. */
const aliasBomb = (items: number) =>
  `- &a\n  KeyPath: eventName\n  Condition: IsIn\n  Values: [${bigList(items)}]\n${'- *a\n'.repeat(99)}`
/** Billion laughs: 9 levels of 10 aliases of the level below. */
const laughs = () => {
  const lines = ['- a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
  for (let l = 1; l <= 9; l++)
    lines.push(
      `  a${l}: &a${l} [${Array(10)
        .fill(`*a${l - 1}`)
        .join(', ')}]`,
    )
  return `${lines.join('\n')}\n- KeyPath: eventName\n  Condition: Equals\n  Value: x\n`
}

const HOSTILE: Record<string, { text: string; message: RegExp }> = {
  'flow brackets (the V8 crash)': {
    text: '['.repeat(100_000) + ']'.repeat(100_000),
    message: /nests deeper than 100 levels/,
  },
  'flow maps': { text: `${'{a: '.repeat(50_000)}1${'}'.repeat(50_000)}`, message: /nests deeper than 100 levels/ },
  'compact block sequences': { text: `${'- '.repeat(100_000)}x`, message: /nests deeper than 100 levels/ },
  'brackets hidden behind quoted closers': {
    text: `${'[ "]]", '.repeat(20_000)}x`,
    message: /nests deeper than 100 levels/,
  },
  'indented block maps': {
    text: `${Array.from({ length: 300 }, (_, i) => `${' '.repeat(i)}a:`).join('\n')} 1`,
    message: /nests deeper than 100 levels/,
  },
  'large anchor aliased 99 times': {
    text: aliasBomb(25_000),
    message: /aliases expand the text to more than \d+ bytes/,
  },
  'billion laughs': { text: laughs(), message: /aliases expand the text to more than \d+ bytes/ },
  'alias of its own anchor': { text: '- &a\n  Any: [*a]\n', message: /refers to its own anchor/ },
}

let child: ChildServer
const H = { 'X-API-Key': TOKEN }
const req = (method: string, p: string, body?: unknown) => httpRequest(child.url, method, p, body, H)
/** User + system CPU of the child server so far, in ms (/proc/PID/stat, in clock ticks of 10 ms). */
const childCpuMs = () => {
  const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}
const timed = async (f: () => Promise<ApiResponse>) => {
  const start = performance.now()
  const cpu = childCpuMs()
  const res = await f()
  return { res, ms: performance.now() - start, cpuMs: childCpuMs() - cpu }
}
const quick = (tt: TapTest, label: string, ms: number, cpuMs: number) => {
  tt.ok(cpuMs < QUICK_CPU_MS, `${label}: answered with ${cpuMs} ms of server CPU (${Math.round(ms)} ms wall)`)
  tt.ok(ms < ANSWER_MS, `${label}: answered, not hung (${Math.round(ms)} ms)`)
}

t.before(async () => {
  child = await startChild({ dataDir: tempDir(), env: { RULEKEEPER_BOOTSTRAP_TOKEN: TOKEN } })
  const res = await req('POST', '/simple-rules', SAMPLE_BODIES.simple('Bounds.Existing'))
  if (res.status !== 200) throw new Error(`cannot create the fixture rule: ${res.status} ${res.text}`)
})
t.teardown(async () => {
  await child?.stop()
})

async function storedState(): Promise<string> {
  const [simple, corr] = await Promise.all([
    req('GET', '/simple-rules?limit=1000'),
    req('GET', '/correlation-rules?limit=1000'),
  ])
  return JSON.stringify([simple.body, corr.body])
}

/** The status of GET /healthz (200 while the server is alive). */
async function healthz(): Promise<number> {
  const res = await fetch(`${child.url}/healthz`)
  await res.arrayBuffer()
  return res.status
}

for (const [name, { text, message }] of Object.entries(HOSTILE)) {
  t.test(`hostile YAML text: ${name}`, async (tt) => {
    const before = await storedState()
    const writes: Array<[string, string, unknown, string]> = [
      [
        'simple detection',
        '/simple-rules',
        SAMPLE_BODIES.simple('Bounds.Hostile', { detection: text, tests: [] }),
        '/detection',
      ],
      [
        'simple detection, run-tests-only',
        '/simple-rules?run-tests-only=true',
        SAMPLE_BODIES.simple('Bounds.Hostile', { detection: text }),
        '/detection',
      ],
      [
        'simple inlineFilters',
        '/simple-rules',
        SAMPLE_BODIES.simple('Bounds.Hostile', { inlineFilters: text }),
        '/inlineFilters',
      ],
      [
        'simple dynamicSeverities, PUT',
        '/simple-rules/Bounds.Existing',
        SAMPLE_BODIES.simple('Bounds.Existing', { dynamicSeverities: text }),
        '/dynamicSeverities',
      ],
      [
        'correlation detection',
        '/correlation-rules',
        SAMPLE_BODIES.correlation('Bounds.Hostile', { detection: text }),
        '/detection',
      ],
    ]
    for (const [label, path, body, field] of writes) {
      const method = path.includes('/Bounds.Existing') ? 'PUT' : 'POST'
      const { res, ms, cpuMs } = await timed(() => req(method, path, body))
      tt.equal(res.status, 400, `${label}: 400 (${Math.round(ms)} ms)`)
      quick(tt, label, ms, cpuMs)
      const problem = (res.body?.errors ?? []).find((e: { path: string }) => e.path === field)
      tt.match(problem?.message, message, `${label}: the message says why, at ${field}`)
    }
    // A title that is not a YAML string is taken literally: the server must still answer quickly.
    const { res, ms, cpuMs } = await timed(() =>
      req('POST', '/simple-rules?run-tests-only=true', SAMPLE_BODIES.simple('Bounds.Hostile', { alertTitle: text })),
    )
    tt.ok(res.status < 500, `alertTitle: no 5xx (${res.status})`)
    quick(tt, 'alertTitle', ms, cpuMs)
    tt.equal(await healthz(), 200, 'the server still answers /healthz')
    tt.equal(await storedState(), before, 'nothing stored changed')
  })
}

t.test('concurrent attackers: /healthz keeps a median under 100 ms', async (tt) => {
  const before = await storedState()
  const texts = Object.values(HOSTILE).map((h) => h.text)
  const ROUNDS = 25
  const CLIENTS = 6
  let refused = 0
  let other = 0
  let running = true
  const attackers = Array.from({ length: CLIENTS }, async (_, c) => {
    for (let r = 0; r < ROUNDS; r++) {
      const text = texts[(c + r) % texts.length]!
      const res = await req(
        'POST',
        '/simple-rules',
        SAMPLE_BODIES.simple(`Bounds.Attack${c}`, { detection: text, tests: [] }),
      )
      if (res.status === 400) refused++
      else other++
    }
  })
  const samples: number[] = []
  const sampler = (async () => {
    while (running) {
      const start = performance.now()
      const res = await fetch(`${child.url}/healthz`)
      await res.arrayBuffer()
      samples.push(performance.now() - start)
      await new Promise((r) => setTimeout(r, 20)) // wait: the pace of latency samples
    }
  })()
  await Promise.all(attackers)
  running = false
  await sampler
  samples.sort((a, b) => a - b)
  const median = samples[Math.floor(samples.length / 2)]!
  tt.comment(
    `${samples.length} /healthz samples under attack: median ${median.toFixed(1)} ms, max ${samples[samples.length - 1]!.toFixed(1)} ms`,
  )
  tt.equal(refused, CLIENTS * ROUNDS, 'every hostile write was refused with 400')
  tt.equal(other, 0)
  tt.ok(samples.length >= 20, `enough samples (${samples.length})`)
  tt.ok(median < 100, `median /healthz under attack ${median.toFixed(1)} ms < 100 ms`)
  tt.equal(await healthz(), 200, 'the server still answers /healthz')
  tt.equal(await storedState(), before, 'nothing stored changed')
})

t.test('per-rule limits: file bytes and tests', async (tt) => {
  const MAX_FILE = 8192
  const s = await startInProcess({ config: { rules: { maxFileBytes: MAX_FILE, maxTests: 3 } } })
  tt.teardown(() => s.close())
  const py = (bytes: number) => {
    const head = 'def rule(event):\n    return True\n#'
    return `${head}${'x'.repeat(bytes - head.length - 1)}\n`
  }
  // The Python body is its own file: exactly at the limit is accepted, one byte more is a 413.
  let res = await s.request('POST', '/scheduled-rules', SAMPLE_BODIES.scheduled('Limits.PyAt', { body: py(MAX_FILE) }))
  tt.equal(res.status, 200, `.py body of exactly ${MAX_FILE} bytes accepted: ${res.text.slice(0, 200)}`)
  res = await s.request(
    'POST',
    '/scheduled-rules',
    SAMPLE_BODIES.scheduled('Limits.PyOver', { body: py(MAX_FILE + 1) }),
  )
  tt.equal(res.status, 413, '.py body one byte over: 413')
  tt.match(
    res.body?.message,
    /the field \/body is 8193 bytes, larger than a rule file may be \(rules\.maxFileBytes: 8192 bytes\)/,
  )
  tt.same(res.body?.errors?.[0]?.path, '/body')
  // A YAML-text field over the limit is refused before it is parsed.
  res = await s.request(
    'POST',
    '/simple-rules',
    SAMPLE_BODIES.simple('Limits.Detection', {
      detection: `# ${'x'.repeat(MAX_FILE)}\n- KeyPath: a\n  Condition: Exists\n`,
    }),
  )
  tt.equal(res.status, 413, 'detection over the limit: 413')
  tt.match(res.body?.message, /the field \/detection is \d+ bytes/)
  // Fields under the limit that make a file over it: 413 for the rule file.
  res = await s.request(
    'POST',
    '/simple-rules',
    SAMPLE_BODIES.simple('Limits.File', {
      description: 'd'.repeat(MAX_FILE - 100),
      runbook: 'r'.repeat(MAX_FILE - 100),
    }),
  )
  tt.equal(res.status, 413, 'a rule file over the limit: 413')
  tt.match(res.body?.message, /the rule file \(aliases expanded\) is \d+ bytes/)
  // Tests: exactly the limit accepted, one more refused with 400 at /tests.
  const test = (i: number) => ({ name: `t${i}`, expectedResult: true, log: { eventName: 'ConsoleLogin' } })
  res = await s.request('POST', '/simple-rules', SAMPLE_BODIES.simple('Limits.TestsAt', { tests: [0, 1, 2].map(test) }))
  tt.equal(res.status, 200, '3 tests (the limit) accepted')
  res = await s.request(
    'POST',
    '/simple-rules?run-tests-only=true',
    SAMPLE_BODIES.simple('Limits.TestsOver', { tests: [0, 1, 2, 3].map(test) }),
  )
  tt.equal(res.status, 400, '4 tests: 400')
  tt.same(res.body?.errors, [
    { path: '/tests', message: 'a rule has at most 3 tests (rules.maxTests), this one has 4' },
  ])
  const listed = await s.request('GET', '/simple-rules?limit=100')
  tt.same(
    listed.body.results.map((r: { id: string }) => r.id).filter((id: string) => id.startsWith('Limits.')),
    ['Limits.TestsAt'],
    'only the accepted simple rule is stored',
  )
})

t.test('the default test limit is 500', async (tt) => {
  const s = await startInProcess()
  tt.teardown(() => s.close())
  tt.equal(s.service.config.rules.maxTests, 500)
  tt.equal(s.service.config.rules.maxFileBytes, 262144)
  const test = (i: number) => ({ name: `t${i}`, expectedResult: true, log: { eventName: 'ConsoleLogin' } })
  let res = await s.request(
    'POST',
    '/simple-rules?run-tests-only=true',
    SAMPLE_BODIES.simple('Limits.Five', { tests: Array.from({ length: 500 }, (_, i) => test(i)) }),
  )
  tt.equal(res.status, 204, '500 tests accepted')
  res = await s.request(
    'POST',
    '/simple-rules?run-tests-only=true',
    SAMPLE_BODIES.simple('Limits.Five', { tests: Array.from({ length: 501 }, (_, i) => test(i)) }),
  )
  tt.equal(res.status, 400, '501 tests refused')
  tt.equal(res.body?.errors?.[0]?.path, '/tests')
})
