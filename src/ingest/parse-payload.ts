// Turns a delivery body into records: one JSON object, a JSON array, or NDJSON, told apart by the
// content alone. Invalid UTF-8 never fails a whole request: such bytes are decoded "surrogateescape"
// style (byte 0xNN becomes the lone surrogate U+DCNN), so the record that holds them can be rejected
// alone and kept with its bytes visible as \udcNN escapes.
import { isUtf8 } from 'node:buffer'
import { RulekeeperError } from '../errors.js'
import { nestedWithin } from '../json-depth.js'

type PayloadItem =
  | { index: number; line?: number; value: unknown; text?: string }
  | { index: number; line?: number; unreadable: string; raw: string }

/**
 * Deeper records are rejected: V8 parses any depth, but JSON.stringify and every recursive walk
 * would overflow the stack on a few thousand levels. Audit records are 3–4 levels deep.
 */
export const MAX_RECORD_DEPTH = 64

/** Whether a parsed value nests objects/arrays deeper than `max` (json-depth.ts). */
export function exceedsDepth(value: unknown, max = MAX_RECORD_DEPTH): boolean {
  return !nestedWithin(value, max)
}

/** A copy cut at `max` levels, for keeping a too-deep record in _rejected without overflowing. */
export function cutAtDepth(value: unknown, max = MAX_RECORD_DEPTH): unknown {
  if (typeof value !== 'object' || value === null) return value
  if (max <= 0) return `[nested deeper than ${MAX_RECORD_DEPTH} levels: cut]`
  if (Array.isArray(value)) return value.map((v) => cutAtDepth(v, max - 1))
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cutAtDepth(v, max - 1)]))
}

type PayloadForm = 'object' | 'array' | 'ndjson'

export interface ParsedPayload {
  form: PayloadForm
  items: PayloadItem[]
  /** True when some text in the body is not well-formed Unicode (checked per record later). */
  suspectUnicode: boolean
}

/** Decodes bytes as UTF-8, mapping each byte of an invalid sequence to U+DC00+byte. */
export function decodeSurrogateEscape(buf: Buffer): string {
  const decoder = new TextDecoder('utf-8', { fatal: true })
  let out = ''
  let i = 0
  let runStart = 0
  while (i < buf.length) {
    const b = buf[i]!
    let len = 0
    if (b < 0x80) len = 1
    else if (b >= 0xc2 && b <= 0xdf) len = 2
    else if (b >= 0xe0 && b <= 0xef) len = 3
    else if (b >= 0xf0 && b <= 0xf4) len = 4
    let ok = len > 0 && i + len <= buf.length
    for (let k = 1; ok && k < len; k++) ok = (buf[i + k]! & 0xc0) === 0x80
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are invalid too.
    if (ok && len === 3) {
      const c = buf[i + 1]!
      ok = !(b === 0xe0 && c < 0xa0) && !(b === 0xed && c >= 0xa0)
    } else if (ok && len === 4) {
      const c = buf[i + 1]!
      ok = !(b === 0xf0 && c < 0x90) && !(b === 0xf4 && c >= 0x90)
    }
    if (ok) {
      i += len
      continue
    }
    out += decoder.decode(buf.subarray(runStart, i)) + String.fromCharCode(0xdc00 + b)
    i += 1
    runStart = i
  }
  return out + decoder.decode(buf.subarray(runStart))
}

// With the u flag a valid pair is one code point; only an unpaired half is in category Cs.
const LONE_SURROGATE = /\p{Cs}/u

/** Whether any string (key or value) inside a parsed JSON value holds a lone surrogate. */
export function hasIllFormedText(value: unknown): boolean {
  if (typeof value === 'string') return LONE_SURROGATE.test(value)
  if (Array.isArray(value)) return value.some(hasIllFormedText)
  if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) if (LONE_SURROGATE.test(k) || hasIllFormedText(v)) return true
  }
  return false
}

const firstNonSpace = (text: string): number => {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09 && c !== 0xfeff) return i
  }
  return -1
}

/**
 * Splits the body into items. Throws BadRequest when no record at all can be read (empty body, not
 * JSON) and PayloadTooLarge past maxRecords, both before anything is stored.
 */
export function parsePayload(body: Buffer, maxRecords: number): ParsedPayload {
  const validUtf8 = isUtf8(body)
  let text = validUtf8 ? body.toString('utf8') : decodeSurrogateEscape(body)
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
  // Escaped lone surrogates (\ud800) are as ill-formed as raw invalid bytes; only then look deeper.
  const suspectUnicode = !validUtf8 || /\\u[dD][89a-fA-F]/.test(text)
  const start = firstNonSpace(text)
  if (start < 0)
    throw new RulekeeperError('BadRequest', 'the body is empty: send a JSON object, a JSON array or NDJSON')
  const tooMany = () =>
    new RulekeeperError('PayloadTooLarge', `a request may hold at most ${maxRecords} records`, { limit: maxRecords })

  // A whole-body parse settles object and array bodies; NDJSON fails it at the first line break.
  let whole: unknown
  let wholeOk = false
  try {
    whole = JSON.parse(text)
    wholeOk = true
  } catch {
    /* not one JSON value: NDJSON or garbage */
  }
  if (wholeOk && Array.isArray(whole)) {
    if (whole.length === 0) throw new RulekeeperError('BadRequest', 'the body is an empty array: no records to store')
    if (whole.length > maxRecords) throw tooMany()
    return { form: 'array', items: whole.map((value, index) => ({ index, value })), suspectUnicode }
  }
  if (wholeOk && typeof whole === 'object' && whole !== null) {
    // Also a pretty-printed single object: it spans lines but is still one record.
    return { form: 'object', items: [{ index: 0, value: whole }], suspectUnicode }
  }
  if (wholeOk)
    throw new RulekeeperError('BadRequest', 'the body must be a JSON object, a JSON array of objects or NDJSON')

  const items: PayloadItem[] = []
  let readable = 0
  let lineNo = 0
  let pos = 0
  while (pos <= text.length) {
    let end = text.indexOf('\n', pos)
    if (end < 0) end = text.length
    lineNo++
    const lineText = text.slice(pos, end).replace(/\r$/, '')
    pos = end + 1
    if (firstNonSpace(lineText) < 0) continue
    if (items.length >= maxRecords) throw tooMany()
    const index = items.length
    try {
      items.push({ index, line: lineNo, value: JSON.parse(lineText), text: lineText })
      readable++
    } catch (err) {
      items.push({
        index,
        line: lineNo,
        unreadable: `line ${lineNo} is not JSON: ${(err as Error).message}`,
        raw: lineText,
      })
    }
  }
  if (readable === 0) throw new RulekeeperError('BadRequest', 'the body is not JSON: no record could be read')
  return { form: 'ndjson', items, suspectUnicode }
}
