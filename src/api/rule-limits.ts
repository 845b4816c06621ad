// Per-rule size limits of a write body, checked before any field is parsed: a string field (a
// YAML text, the Python `body`, …) larger than a rule file may be is a 413, more tests than a rule
// may have is a 400 naming `/tests`; after parsing, the rule as a whole (aliases expanded) must
// still fit in a file of the limit (413). Also the change reason header: its limit, and its bytes
// read as UTF-8 (what curl and the console send) or, when they are not UTF-8, as Latin-1.
import { RulekeeperError, validationFailed } from '../errors.js'
import { isPlainObject } from '../is-plain-object.js'

/** The longest `X-Change-Reason` a write may carry, in characters (api.md; the OpenAPI document says it too). */
export const MAX_CHANGE_REASON = 2000

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/**
 * The text of an `X-Change-Reason` header value. Node hands header bytes over as Latin-1 characters
 * (one per byte); bytes that are valid UTF-8 are that UTF-8 text ("Zürich — ✓" from curl or the
 * console), anything else stays Latin-1 (a client that sent ISO-8859-1 bytes).
 */
export function headerText(raw: string): string {
  // Only 0x00–0x7F: the same text either way.
  if (!/[\x80-\xff]/.test(raw)) return raw
  try {
    return strictUtf8.decode(Buffer.from(raw, 'latin1'))
  } catch {
    return raw
  }
}

/** A write's change reason (undefined when none is given); a 400 past MAX_CHANGE_REASON characters. */
export function changeReason(rawHeader: string): string | undefined {
  const header = headerText(rawHeader)
  // Characters, not UTF-16 units: an emoji is one (counted only when the units could be too many).
  if (header.length > MAX_CHANGE_REASON && [...header].length > MAX_CHANGE_REASON)
    throw new RulekeeperError(
      'BadRequest',
      `X-Change-Reason is longer than ${MAX_CHANGE_REASON.toLocaleString('en-US')} characters`,
    )
  return header || undefined
}

export interface RuleLimits {
  /** Bytes of a rule file, and of any one string field of a write body (the `.py` body included). */
  maxFileBytes: number
  /** Unit tests of one rule. */
  maxTests: number
}

function tooLarge(path: string, what: string, bytes: number, max: number): RulekeeperError {
  const message = `${what} is ${bytes} bytes, larger than a rule file may be (rules.maxFileBytes: ${max} bytes)`
  return new RulekeeperError('PayloadTooLarge', message, { errors: [{ path, message }] })
}

/** Refuses a body with a string field over the file limit or with too many tests. */
export function checkBodyLimits(body: unknown, limits: RuleLimits): void {
  if (!isPlainObject(body)) return
  for (const [key, value] of Object.entries(body)) {
    // UTF-8 bytes are at most 3 per UTF-16 unit: only long strings need counting.
    if (typeof value !== 'string' || value.length * 3 <= limits.maxFileBytes) continue
    const bytes = Buffer.byteLength(value)
    if (bytes > limits.maxFileBytes) throw tooLarge(`/${key}`, `the field /${key}`, bytes, limits.maxFileBytes)
  }
  const tests = body.tests
  if (Array.isArray(tests) && tests.length > limits.maxTests) {
    throw validationFailed([
      {
        path: '/tests',
        message: `a rule has at most ${limits.maxTests} tests (rules.maxTests), this one has ${tests.length}`,
      },
    ])
  }
}

/**
 * Refuses a rule whose file would be larger than the limit. Measured as JSON, which is close to the
 * YAML the writer renders and costs a fraction of rendering it.
 */
export function checkFileSize(data: Record<string, unknown>, limits: RuleLimits): void {
  const bytes = Buffer.byteLength(JSON.stringify(data))
  if (bytes > limits.maxFileBytes) throw tooLarge('', 'the rule file (aliases expanded)', bytes, limits.maxFileBytes)
}
