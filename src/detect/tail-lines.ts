// The last lines of files, read from their ends: at most `max` lines over a list of files (the
// last file's last lines first), never more of a file than those lines' bytes plus one block. The
// rule errors a start keeps in memory come from here (detection-store.ts), not from the whole history.
import { open } from 'node:fs/promises'

const BLOCK = 1 << 20

/** The last `max` non-empty lines of one file's first `length` bytes, oldest first. */
async function tailOfFile(file: string, length: number, max: number): Promise<string[]> {
  const fh = await open(file, 'r')
  try {
    const lines: string[] = []
    let end = length
    let carry = Buffer.alloc(0)
    while (end > 0 && lines.length < max) {
      const start = Math.max(0, end - BLOCK)
      const buf = Buffer.alloc(end - start)
      let off = 0
      while (off < buf.length) {
        const { bytesRead } = await fh.read(buf, off, buf.length - off, start + off)
        if (bytesRead === 0) break
        off += bytesRead
      }
      const chunk = Buffer.concat([buf.subarray(0, off), carry])
      // Lines are cut at '\n' bytes (never inside a UTF-8 character); the first piece may be partial.
      let stop = chunk.length
      for (let i = chunk.length - 1; i >= 0 && lines.length < max; i--) {
        if (chunk[i] !== 0x0a) continue
        if (stop > i + 1) lines.push(chunk.subarray(i + 1, stop).toString('utf8'))
        stop = i
      }
      carry = chunk.subarray(0, stop)
      end = start
    }
    if (end === 0 && carry.length > 0 && lines.length < max) lines.push(carry.toString('utf8'))
    return lines.reverse()
  } finally {
    await fh.close()
  }
}

/** The last `max` lines over `files` (in order, each with its length to read), oldest first. */
export async function tailLines(
  files: ReadonlyArray<{ file: string; length: number }>,
  max: number,
): Promise<string[]> {
  const out: string[][] = []
  let n = 0
  for (let i = files.length - 1; i >= 0 && n < max; i--) {
    const lines = await tailOfFile(files[i]!.file, files[i]!.length, max - n)
    out.push(lines)
    n += lines.length
  }
  return out.reverse().flat()
}
