// Worker thread entry of rule-worker.ts: holds the offloaded rules of the served revision (each
// built here by the module its engine named, engine/live.ts `Offload`, from the same data as on
// the main thread, per log type in the detector's order) and evaluates chunks of stored lines with
// them, answering only what is not "no match" per record index and rule slot.
import { parentPort } from 'node:worker_threads'
import type { Evaluation, InProcessRule, LiveEvaluator, WorkerCompile } from '../engine/live.js'
import { RulePrefilter } from './rule-prefilter.js'
import { parseObject } from './stored-log.js'

export type RuleWorkerRequest =
  | {
      type: 'rules'
      /** Per log type: [slot in the detector's rule list, rule id, the building module's URL, its data]. */
      logTypes: Array<[string, Array<[number, string, string, Readonly<Record<string, unknown>>]>]>
    }
  | { type: 'chunk'; id: number; lines: string }

/** `hits`: flat triples [record index, slot, evaluation], in record then slot order; `ready` once loaded. */
export type RuleWorkerAnswer =
  | { id: number; hits: Array<number | Evaluation> }
  | { id: number; error: string }
  | { ready: true }

/** Per log type: the rules in the detector's slot order, and which of them a record can meet. */
interface LogTypeRules {
  rules: Array<[number, LiveEvaluator]>
  prefilter: RulePrefilter
}

let byLogType = new Map<string, LogTypeRules>()
const builders = new Map<string, Promise<WorkerCompile>>()

/** The `compileOnWorker` export of an engine module (imported once). */
function builder(module: string): Promise<WorkerCompile> {
  let b = builders.get(module)
  if (!b) {
    b = import(module).then((m: { compileOnWorker?: WorkerCompile }) => {
      if (typeof m.compileOnWorker !== 'function') throw new Error(`${module} does not export compileOnWorker`)
      return m.compileOnWorker
    })
    builders.set(module, b)
  }
  return b
}

async function setRules(logTypes: Extract<RuleWorkerRequest, { type: 'rules' }>['logTypes']): Promise<void> {
  const compiled = new Map<string, InProcessRule>()
  const next = new Map<string, LogTypeRules>()
  for (const [logType, rules] of logTypes) {
    const list: InProcessRule[] = []
    for (const [, id, module, data] of rules) {
      let rule = compiled.get(id)
      if (!rule) {
        const r = (await builder(module))(data)
        // The main thread compiled the same data: a difference is a bug, not a rule error.
        if ('error' in r) throw new Error(`rule ${id} does not compile in the rule worker: ${r.error}`)
        compiled.set(id, (rule = r))
      }
      list.push(rule)
    }
    next.set(logType, {
      rules: rules.map(([slot], k) => [slot, list[k]!.evaluate]),
      prefilter: new RulePrefilter(list.map((r) => r.requires)),
    })
  }
  byLogType = next
}

const isNoMatch = (e: Evaluation) => 'matched' in e && !e.matched

function evaluate(lines: string): Array<number | Evaluation> {
  const hits: Array<number | Evaluation> = []
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
        if (!isNoMatch(out)) hits.push(i, slot, out)
      }
    if (nl < 0) return hits
    start = nl + 1
    i++
  }
}

let rulesError: string | null = null
/** Messages are handled in order: a chunk waits for the rules sent before it to be built. */
let queue: Promise<void> = Promise.resolve()

function handle(msg: RuleWorkerRequest): Promise<void> | void {
  if (msg.type === 'rules')
    return setRules(msg.logTypes).then(
      () => {
        rulesError = null
      },
      (err: unknown) => {
        rulesError = (err as Error).message
      },
    )
  let answer: RuleWorkerAnswer
  try {
    if (rulesError !== null) throw new Error(rulesError)
    answer = { id: msg.id, hits: evaluate(msg.lines) }
  } catch (err) {
    answer = { id: msg.id, error: (err as Error).message }
  }
  parentPort!.postMessage(answer)
}

parentPort!.on('message', (msg: RuleWorkerRequest) => {
  queue = queue.then(() => handle(msg))
})

parentPort!.postMessage({ ready: true } satisfies RuleWorkerAnswer)
