// Worker thread entry of rule-worker.ts: holds the simple rules of the served revision (compiled
// here from their file data, per log type in the detector's order) and evaluates chunks of stored
// lines with them, answering only what is not "no match" per record index and rule slot.
import { parentPort } from 'node:worker_threads'
import { compileRule } from '../engine/simple/index.js'
import { RulePrefilter } from './rule-prefilter.js'
import { NO_MATCH, type SimpleEvaluation, simpleEvaluator } from './simple-evaluator.js'
import { parseObject } from './stored-log.js'

export type RuleWorkerRequest =
  | {
      type: 'rules'
      /** Per log type: [slot in the detector's rule list, rule id, the rule's file data]. */
      logTypes: Array<[string, Array<[number, string, Readonly<Record<string, unknown>>]>]>
    }
  | { type: 'chunk'; id: number; lines: string }

/** `hits`: flat triples [record index, slot, evaluation], in record then slot order; `ready` once loaded. */
export type RuleWorkerAnswer =
  | { id: number; hits: Array<number | SimpleEvaluation> }
  | { id: number; error: string }
  | { ready: true }

type Evaluator = (event: unknown) => SimpleEvaluation

/** Per log type: the rules in the detector's slot order, and which of them a record can meet. */
interface LogTypeRules {
  rules: Array<[number, Evaluator]>
  prefilter: RulePrefilter
}

let byLogType = new Map<string, LogTypeRules>()

function setRules(logTypes: Extract<RuleWorkerRequest, { type: 'rules' }>['logTypes']): void {
  const compiled = new Map<string, Evaluator>()
  byLogType = new Map()
  for (const [logType, rules] of logTypes) {
    const list: Array<[number, Evaluator]> = []
    for (const [slot, id, data] of rules) {
      let evaluate = compiled.get(id)
      if (!evaluate) {
        const e = simpleEvaluator(data)
        // The main thread compiled the same data: a difference is a bug, not a rule error.
        if (typeof e !== 'function') throw new Error(`rule ${id} does not compile in the rule worker: ${e.error}`)
        compiled.set(id, (evaluate = e))
      }
      list.push([slot, evaluate])
    }
    const trees = rules.map(([, , data]) => compileRule(data).rule?.tree ?? null)
    byLogType.set(logType, { rules: list, prefilter: new RulePrefilter(trees) })
  }
}

function evaluate(lines: string): Array<number | SimpleEvaluation> {
  const hits: Array<number | SimpleEvaluation> = []
  let i = 0
  let start = 0
  for (;;) {
    const nl = lines.indexOf('\n', start)
    const record = parseObject(nl < 0 ? lines.slice(start) : lines.slice(start, nl))
    // A damaged line (not a JSON object) is skipped: the detector never evaluates it either.
    const lt = record && byLogType.get(String(record.p_log_type ?? ''))
    if (lt)
      for (const k of lt.prefilter.candidates(record)) {
        const [slot, rule] = lt.rules[k]!
        const out = rule(record)
        if (out !== NO_MATCH) hits.push(i, slot, out)
      }
    if (nl < 0) return hits
    start = nl + 1
    i++
  }
}

let rulesError: string | null = null

parentPort!.on('message', (msg: RuleWorkerRequest) => {
  if (msg.type === 'rules') {
    try {
      setRules(msg.logTypes)
      rulesError = null
    } catch (err) {
      rulesError = (err as Error).message
    }
    return
  }
  let answer: RuleWorkerAnswer
  try {
    if (rulesError !== null) throw new Error(rulesError)
    answer = { id: msg.id, hits: evaluate(msg.lines) }
  } catch (err) {
    answer = { id: msg.id, error: (err as Error).message }
  }
  parentPort!.postMessage(answer)
})

parentPort!.postMessage({ ready: true } satisfies RuleWorkerAnswer)
