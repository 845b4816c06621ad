// Worker thread entry of diff-offload.ts: computes unified diffs (unified-diff.ts) and answers with
// the text, or with the code and message of the RulekeeperError that bounded it (a 413).
import { parentPort } from 'node:worker_threads'
import { isRulekeeperError } from '../errors.js'
import { unifiedDiff } from './unified-diff.js'

parentPort!.on('message', (msg: { id: number; path: string; before: string | null; after: string | null }) => {
  try {
    parentPort!.postMessage({ id: msg.id, diff: unifiedDiff(msg.path, msg.before, msg.after) })
  } catch (err) {
    const code = isRulekeeperError(err) ? err.code : 'Internal'
    parentPort!.postMessage({ id: msg.id, error: { code, message: (err as Error).message } })
  }
})
