// Worker thread entry of yaml-offload.ts: parses YAML texts with the bounded reader and answers
// with their problems only (the value stays here; the caller parses again if it needs it).
import { parentPort } from 'node:worker_threads'
import { parseYaml } from './yaml-text.js'

parentPort!.on('message', (msg: { id: number; text: string }) => {
  let errors: Array<{ message: string }>
  try {
    errors = parseYaml(msg.text).errors
  } catch (err) {
    errors = [{ message: `the YAML could not be parsed: ${(err as Error).message}` }]
  }
  parentPort!.postMessage({ id: msg.id, errors })
})
