// Waiting in tests: on a condition, never on a fixed time. waitFor polls until a function gives a
// value (not undefined or false) and fails, naming what it waited for, once its deadline passes.
// `sleep` is for the few waits whose time is the point; each call carries a `// wait:` reason.
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** Polls `fn` until it returns a value other than undefined/false; fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  fn: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 20_000,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const v = await fn()
      if (v !== undefined && v !== false) return v
      last = v
    } catch (err) {
      last = err
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${String(last)})`)
    await sleep(everyMs) // wait: the poll interval
  }
}
