// Rule diffs off the event loop: texts above a small size are diffed by one worker thread, one at a
// time, so a large diff (bounded by unified-diff.ts's limits) costs that worker, not the requests
// and /healthz. Small texts (the usual rule edit) are diffed inline: a worker round trip would cost
// more than the diff.
import { type ErrorCode, RulekeeperError } from '../errors.js'
import { OffloadWorker, WorkerLost } from '../offload-worker.js'
import { unifiedDiff } from './unified-diff.js'

/** Texts (both sides together) shorter than this are diffed on the main thread (well under 1 ms). */
export const DIFF_OFFLOAD_MIN_CHARS = 16 * 1024

type Answer = { id: number; diff: string } | { id: number; error: { code: ErrorCode | 'Internal'; message: string } }

const differ = new OffloadWorker<{ path: string; before: string | null; after: string | null }, Answer>(
  import.meta.url,
  'diff-worker',
)

/** unifiedDiff(path, before, after), in the worker thread when the texts are large. */
export async function unifiedDiffOffThread(path: string, before: string | null, after: string | null): Promise<string> {
  if ((before?.length ?? 0) + (after?.length ?? 0) < DIFF_OFFLOAD_MIN_CHARS) return unifiedDiff(path, before, after)
  let answer: Answer
  try {
    answer = await differ.run({ path, before, after })
  } catch (err) {
    if (!(err instanceof WorkerLost)) throw err
    throw new Error(err.reason === 'stopped' ? 'the diff worker stopped' : `the diff worker failed: ${err.reason}`)
  }
  if ('diff' in answer) return answer.diff
  if (answer.error.code === 'Internal') throw new Error(answer.error.message)
  throw new RulekeeperError(answer.error.code, answer.error.message)
}
