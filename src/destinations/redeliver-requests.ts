// Redelivery requests written into the data directory by `rulekeeper alerts redeliver` (beside a
// running server or not): one file per request under `<data dir>/destinations/redeliver/`, picked
// up by the server at start and every second after, then removed.
import { randomBytes } from 'node:crypto'
import { mkdir, readdir, unlink } from 'node:fs/promises'
import path from 'node:path'
import { writeFileDurable } from '../durable-file.js'

export const ALERT_ID = /^[0-9a-f]{32}$/

export const requestsDir = (dataDir: string) => path.join(dataDir, 'destinations', 'redeliver')

export async function writeRedeliverRequest(dataDir: string, alertId: string): Promise<void> {
  if (!ALERT_ID.test(alertId)) throw new Error(`not an alert id: ${JSON.stringify(alertId.slice(0, 100))}`)
  const dir = requestsDir(dataDir)
  await mkdir(dir, { recursive: true })
  await writeFileDurable(path.join(dir, `${alertId}.${randomBytes(4).toString('hex')}.req`), '')
}

/** The alert ids requested so far, each with a function that removes its request. */
export async function readRedeliverRequests(
  dataDir: string,
): Promise<Array<{ alertId: string; done: () => Promise<void> }>> {
  const dir = requestsDir(dataDir)
  let names: string[]
  try {
    names = await readdir(dir)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw err
  }
  return names
    .filter((n) => n.endsWith('.req'))
    .map((n) => ({ alertId: n.split('.')[0] as string, done: () => unlink(path.join(dir, n)).catch(() => {}) }))
    .filter((r) => ALERT_ID.test(r.alertId))
}
