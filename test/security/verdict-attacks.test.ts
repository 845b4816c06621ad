// Unit tests of a Python rule whose code writes forged function results, nested 60,000 deep, to its
// result pipe (fd 3) while its tests run on save: V8 parses such a line, but writing the verdict back
// as JSON overflowed the stack, and the save was a 500. The forger's run must be stopped (its test
// errors: a 400 naming it) and the server stay up; an honest output 900 levels deep still passes.
import t from 'tap'
import { startInProcess } from '../helpers/in-process.js'
import { SAMPLE_BODIES } from '../helpers/rulekeeper.js'

const forged = (fn: string, where: 'rule' | 'title') => `import os


def deep():
    n = 60000
    os.write(3, b'{"t":"fn","fn":"${fn}","output":' + b"[" * n + b"]" * n + b',"error":null}\\n')


def rule(event):
${where === 'rule' ? '    deep()\n' : ''}    return True


def title(event):
${where === 'title' ? '    deep()\n' : ''}    return "x"
`

t.test('forged deep outputs in unit tests', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const test = { name: 'matches', expectedResult: true, log: { a: 1 } }
  for (const [fn, where] of [
    ['rule', 'rule'],
    ['alertContext', 'title'],
    ['title', 'rule'],
  ] as const) {
    const res = await s.request('POST', '/rules?run-tests-only=true', {
      ...SAMPLE_BODIES.python('Verdict.Deep', { body: forged(fn, where), tests: [test] }),
    })
    t.equal(res.status, 400, `a forged ${fn} output: the forger's failed test, not a 500`)
    t.match(res.body?.testResults?.[0]?.error ?? '', /malformed message/, 'its run was stopped')
  }
  const honest = await s.request('POST', '/rules?run-tests-only=true', {
    ...SAMPLE_BODIES.python('Verdict.Honest', {
      body: 'def rule(event):\n    return True\n\n\ndef alert_context(event):\n    v = []\n    for _ in range(898):\n        v = [v]\n    return {"a": v}\n',
      tests: [test],
    }),
  })
  t.equal(honest.status, 204, `an honest context 900 levels deep passes: ${honest.text.slice(0, 300)}`)
  t.equal((await s.request('GET', '/status')).status, 200, 'the server is up')
})
