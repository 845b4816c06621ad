// Reads a delivery's body under the source's limits, through the one bounded reader
// (bounded-body.ts, which counts the bytes on the wire). gzip is recognised by its magic bytes
// (whatever Content-Encoding says) and inflated as the bytes arrive, so a gzip bomb is stopped at
// the decompressed limit instead of being inflated into memory first.
import { createGunzip, type Gunzip } from 'node:zlib'
import { type BodyExchange, type BodyLimit, checkDeclaredLength, readBody } from '../bounded-body.js'
import { RulekeeperError } from '../errors.js'
import type { SourceLimits } from './config.js'

const ACCEPTED = 'accepted: gzip (detected from the bytes) or no compression'

const tooLarge = (what: string, limit: number) =>
  new RulekeeperError('PayloadTooLarge', `the ${what} is larger than the limit of ${limit} bytes`, { limit })
const unsupported = (message: string) => new RulekeeperError('UnsupportedMediaType', message)

/** The limit on the bytes as they arrive (compressed or not). */
const wireLimit = (limits: SourceLimits): BodyLimit => ({
  maxBytes: limits.maxCompressedBytes,
  tooLarge: () => tooLarge('request body', limits.maxCompressedBytes),
})

/** Header checks that need no body: declared length, declared encoding and charset. */
export function checkPayloadHeaders(x: BodyExchange, limits: SourceLimits): void {
  checkDeclaredLength(x, wireLimit(limits))
  const { headers } = x.req
  const encodings = (headers['content-encoding'] ?? '')
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== '')
  for (const e of encodings) {
    if (e !== 'gzip' && e !== 'x-gzip' && e !== 'identity')
      throw unsupported(`Content-Encoding ${e} is not supported (${ACCEPTED})`)
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(headers['content-type'] ?? '')?.[1]?.toLowerCase()
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8' && charset !== 'us-ascii') {
    throw unsupported(`charset ${charset} is not supported: payloads must be UTF-8 JSON`)
  }
}

/** Other compressions, recognised so that the answer says what is wrong instead of "not JSON". */
function foreignCompression(b: Buffer): string | undefined {
  if (b.length >= 4 && b[0] === 0x28 && b[1] === 0xb5 && b[2] === 0x2f && b[3] === 0xfd) return 'zstd'
  if (b.length >= 6 && b.subarray(0, 6).equals(Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]))) return 'xz'
  if (b.length >= 3 && b.toString('latin1', 0, 3) === 'BZh') return 'bzip2'
  if (b.length >= 2 && b[0] === 0x78 && [0x01, 0x5e, 0x9c, 0xda].includes(b[1]!)) return 'zlib/deflate'
  return undefined
}

/** Text in UTF-16 or UTF-32 (BOM, or NUL bytes where JSON has none) is the wrong encoding. */
function wrongEncoding(b: Buffer): string | undefined {
  if (b.length >= 2 && ((b[0] === 0xff && b[1] === 0xfe) || (b[0] === 0xfe && b[1] === 0xff))) return 'UTF-16/UTF-32'
  const head = b.subarray(0, 64)
  if (head.length >= 2 && head.includes(0)) return 'UTF-16/UTF-32 (NUL bytes)'
  return undefined
}

export interface ReadPayloadResult {
  body: Buffer
  gzip: boolean
  compressedBytes: number
}

/**
 * Reads the whole body (bounded-body.ts counts the bytes on the wire). Stops reading (and answers
 * 413) as soon as either limit is passed, and never holds more than the decompressed limit in memory.
 */
export function readPayload(x: BodyExchange, limits: SourceLimits): Promise<ReadPayloadResult> {
  return readBody<ReadPayloadResult>(x, wireLimit(limits), (done, fail) => {
    const chunks: Buffer[] = []
    let compressedBytes = 0
    let outBytes = 0
    let mode: 'undecided' | 'plain' | 'gzip' = 'undecided'
    let head = Buffer.alloc(0)
    let gunzip: Gunzip | undefined
    let failed = false
    const refuse = (err: unknown) => {
      failed = true
      fail(err)
    }

    const pushOut = (chunk: Buffer) => {
      outBytes += chunk.length
      if (outBytes > limits.maxDecompressedBytes)
        return refuse(tooLarge('decompressed body', limits.maxDecompressedBytes))
      chunks.push(chunk)
    }
    const decide = (first: Buffer) => {
      if (first.length >= 2 && first[0] === 0x1f && first[1] === 0x8b) {
        mode = 'gzip'
        gunzip = createGunzip({ chunkSize: 64 * 1024 })
        gunzip.on('data', (c: Buffer) => !failed && pushOut(c))
        gunzip.on('error', (e) => refuse(new RulekeeperError('BadRequest', `the gzip data is invalid: ${e.message}`)))
        gunzip.on('end', () => finish())
        return
      }
      const foreign = foreignCompression(first)
      if (foreign) return refuse(unsupported(`${foreign} compression is not supported (${ACCEPTED})`))
      const enc = wrongEncoding(first)
      if (enc) return refuse(unsupported(`the body looks like ${enc}; payloads must be UTF-8 JSON`))
      mode = 'plain'
    }
    const feed = (chunk: Buffer) => {
      if (mode === 'gzip') gunzip!.write(chunk)
      else pushOut(chunk)
    }
    const finish = () => {
      if (failed) return
      // Inside gzip the text must be UTF-8 too; plain bodies were checked in decide().
      const enc = mode === 'gzip' && chunks.length > 0 ? wrongEncoding(chunks[0]!) : undefined
      if (enc) return refuse(unsupported(`the decompressed body looks like ${enc}; payloads must be UTF-8 JSON`))
      done({ body: Buffer.concat(chunks, outBytes), gzip: mode === 'gzip', compressedBytes })
    }
    return {
      write(chunk) {
        compressedBytes += chunk.length
        if (mode === 'undecided') {
          // Magic numbers need a few bytes; hold tiny first chunks until there are enough.
          head = Buffer.concat([head, chunk])
          if (head.length < 6) return
          decide(head)
          if (!failed) feed(head)
          return
        }
        feed(chunk)
      },
      end() {
        if (mode === 'undecided') {
          if (head.length > 0) decide(head)
          if (failed) return
          if (mode === 'undecided') mode = 'plain'
          if (head.length > 0) feed(head)
        }
        if (mode === 'gzip') gunzip!.end()
        else finish()
      },
      abort() {
        failed = true
        gunzip?.destroy()
      },
    }
  })
}
