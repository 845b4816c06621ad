// What the CLI's printing shares: stdout that survives a closed pipe (`validate … | head` ends the
// output quietly; the command still finishes and exits with its own code), plurals and locations.

let guarded = false

/** Ignores EPIPE on stdout from now on: the reader went away, so what is left to print is dropped. */
export function guardStdout(stream: NodeJS.WriteStream = process.stdout): void {
  if (guarded) return
  guarded = true
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') return
    throw err
  })
}

/** `1 rule`, `2 rules`, `0 rules`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`
}

/** `file.yml:3:5`, `file.yml:3` or `file.yml`: missing parts are left out, never printed as null. */
export function location(path: string, line?: number | null, column?: number | null): string {
  if (line === undefined || line === null) return path
  return column === undefined || column === null ? `${path}:${line}` : `${path}:${line}:${column}`
}
