// Parsing of large YAML texts off the event loop: one worker thread checks a text with the bounded
// reader before the main thread parses it, so a stream of large hostile texts (alias bombs, texts
// that take 100s of ms to compose) costs the worker, not the requests and /healthz. Only texts
// the worker accepts are parsed again on the main thread (bounded by rules.maxFileBytes).
import { OffloadWorker, WorkerLost } from '../offload-worker.js'
import type { YamlProblem } from './yaml-text.js'

/** Texts shorter than this are parsed on the main thread directly (a few ms at most). */
export const OFFLOAD_MIN_CHARS = 16 * 1024

const checker = new OffloadWorker<{ text: string }, { id: number; errors: YamlProblem[] }>(
  import.meta.url,
  'yaml-check-worker',
)

/** The problems of `text` as the bounded reader finds them, computed in the worker thread. */
export async function checkYamlOffThread(text: string): Promise<YamlProblem[]> {
  try {
    return (await checker.run({ text })).errors
  } catch (err) {
    if (!(err instanceof WorkerLost)) throw err
    const why = err.reason === 'stopped' ? 'the parser stopped' : err.reason
    return [{ message: `the YAML could not be parsed: ${why}` }]
  }
}
