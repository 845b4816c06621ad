// A batch rule that answers only its matches and errors (`hits`, Python on warm workers): the pass
// gives every other record of it "no match" without asking, keeps the order of a record's answers
// across in-process and batch rules, never gives a damaged line to anyone, and a late rule's hits
// arrive as one answer per record (late-rules.ts passes them all).
import t from 'tap'
import { type ChunkOutput, passChunk } from '../../src/detect/chunk-pass.js'
import { evaluateRecords } from '../../src/detect/evaluate-records.js'
import type { Evaluation, LiveIndex, LiveRule } from '../../src/detect/live-rules.js'
import { StoredRecord } from '../../src/detect/stored-log.js'
import { recordAt } from '../../src/engine/live.js'
import { ruleMeta } from './rule-meta.js'

const match = (title: string): Evaluation => ({
  matched: true,
  title,
  dedup: title,
  severity: 'LOW',
  alertContext: {},
})

function record(i: number, logType: string, line?: string): StoredRecord {
  const text = line ?? JSON.stringify({ n: i, p_log_type: logType })
  return new StoredRecord('f.ndjson', i * 100, i * 100 + 99, text, 'p', `row${i}`, logType, '')
}

/** A batch rule answering hits only: `pick(k)` says what its k-th record gets (undefined: no match). */
function hitsRule(id: string, pick: (k: number) => Evaluation | undefined, seen: unknown[][]): LiveRule {
  return {
    meta: ruleMeta({ id, kind: 'python', logTypes: ['Editor.Audit', 'Other.Log'] }),
    batch: async () => {
      throw new Error('the pass asked for one answer per record')
    },
    hits: async (events) => {
      seen.push(Array.from({ length: events.length }, (_, k) => recordAt(events, k)))
      const at: number[] = []
      const answers: Evaluation[] = []
      for (let k = 0; k < events.length; k++) {
        const answer = pick(k)
        if (answer) {
          at.push(k)
          answers.push(answer)
        }
      }
      return { at, answers }
    },
  }
}

function index(rules: LiveRule[]): LiveIndex {
  const byLogType = new Map<string, LiveRule[]>()
  for (const r of rules) for (const lt of r.meta.logTypes) byLogType.set(lt, [...(byLogType.get(lt) ?? []), r])
  for (const list of byLogType.values()) list.sort((a, b) => (a.meta.id < b.meta.id ? -1 : 1))
  return { revision: null, byLogType, broken: [], rules: rules.length, batched: rules.filter((r) => r.batch) }
}

function collect(): { out: ChunkOutput; said: string[] } {
  const said: string[] = []
  return {
    said,
    out: {
      addError: (e) => said.push(`error ${e.ruleId} @${e.record?.offset ?? '-'}: ${e.error}`),
      addMatch: (rec, meta, answer) =>
        said.push(`match ${meta.id} @${rec.offset}: ${'title' in answer ? answer.title : ''}`),
    } as ChunkOutput,
  }
}

t.test(
  'hits only: the other records get "no match" unasked, in the rules\' order, damaged lines to no one',
  async (t) => {
    const chunk = [
      record(0, 'Editor.Audit'),
      record(1, 'Other.Log'),
      record(2, 'Editor.Audit', '{"n":2,"p_log_type":"Editor.Audit"'), // damaged
      record(3, 'Editor.Audit'),
      record(4, 'Other.Log'),
      record(5, 'Editor.Audit'),
    ]
    const seenB: unknown[][] = []
    const seenC: unknown[][] = []
    const inProcess: LiveRule = {
      meta: ruleMeta({ id: 'a' }),
      evaluate: (e) => ((e as { n: number }).n % 2 === 1 ? match('a') : { matched: false }),
    }
    const b = hitsRule('b', (k) => (k % 2 === 0 ? match(`b${k}`) : undefined), seenB)
    const c = hitsRule('c', (k) => (k === 1 || k === 3 ? { error: `c${k}` } : undefined), seenC)
    const live = index([c, inProcess, b])
    const evaluations = await evaluateRecords(live, chunk)
    t.same(evaluations.failed, [], 'no rule was asked for a dense answer')
    t.same(
      seenB[0]!.map((e) => (e as { n: number }).n),
      [0, 1, 3, 4, 5],
      'the damaged line is given to no rule',
    )
    const { out, said } = collect()
    await passChunk(
      { chunk, live, broken: [], evaluations: Promise.resolve([null, evaluations]) },
      [null, evaluations],
      out,
      {
        records: 0,
        evaluations: 0,
      },
    )
    t.same(
      said,
      [
        'match b @0: b0', // Editor.Audit: a, b, c
        'error c @100: c1', // Other.Log: b, c
        'match a @300: a',
        'match b @300: b2',
        'error c @400: c3',
        'match a @500: a',
        'match b @500: b4',
      ],
      'answers in stored order, per record in rule id order',
    )
    t.equal(evaluations.of(b, 0, chunk[0]!.record), evaluations.hitsAt?.(0)?.[0]?.[1], 'of() answers from the hits')
    t.same(evaluations.of(c, 0, chunk[0]!.record), { matched: false }, 'no hit: no match')
  },
)

t.test("a late rule's hits come as one answer per record", async (t) => {
  const chunk = [record(0, 'Other.Log'), record(1, 'Other.Log'), record(2, 'Other.Log')]
  const late = hitsRule('late', (k) => (k === 1 ? match('late1') : undefined), [])
  const hits = late.hits!
  late.hits = (events, signal, onLate) => {
    onLate?.()
    return hits(events, signal, onLate)
  }
  const evaluations = await evaluateRecords(index([late]), chunk, undefined, { mayDefer: () => true })
  t.equal(evaluations.late.length, 1, 'the rule is late')
  t.same(await evaluations.late[0]!.results, [{ matched: false }, match('late1'), { matched: false }])
  t.same(evaluations.late[0]!.at, [0, 1, 2])
})
