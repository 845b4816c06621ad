// The one rule-id check and the one case fold. An id must round-trip through UTF-8, be in NFC, and
// hold nothing invisible or deceptive (controls, line and paragraph separators, bidi controls,
// zero-width and other format characters, BOMs, non-ASCII spaces, U+FFFD); besides the spec's own
// rules (1–255 characters, none of < > & " %, no leading or trailing space). See docs/decisions.md
// "Rule ids".

const ID_MAX_LENGTH = 255

/**
 * The characters an id may not hold, as the body of a regex character class (`u` flag): controls,
 * surrogates, format characters (bidi, zero-width, BOM, …), private use, line and paragraph
 * separators, the non-ASCII spaces (Zs but U+0020, listed), noncharacters, U+FFFD, < > & " %.
 */
const FORBIDDEN_CLASS =
  '\\p{Cc}\\p{Cs}\\p{Cf}\\p{Co}\\p{Zl}\\p{Zp}\\u00a0\\u1680\\u2000-\\u200a\\u202f\\u205f\\u3000\\p{Noncharacter_Code_Point}\\ufffd<>&"%'
const FORBIDDEN = new RegExp(`[${FORBIDDEN_CLASS}]`, 'u')

/**
 * The character rules as a JSON Schema `pattern` (ECMAScript, `u` flag), for the OpenAPI document.
 * Only NFC cannot be expressed; the server checks with idCharacterProblem, which agrees otherwise.
 * (One character class under `+`: linear, even on a 10 MB string.)
 */
export const ID_PATTERN = `^(?! )(?!.* $)[^${FORBIDDEN_CLASS}]+$`

const FORBIDDEN_ASCII = new Set(['<', '>', '&', '"', '%'])

function codePoint(ch: string): string {
  return `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`
}

/** Why a single character may not appear in an id, or undefined when it may. */
function characterProblem(ch: string): string | undefined {
  const cp = ch.codePointAt(0)!
  if (cp >= 0xd800 && cp <= 0xdfff) return `a lone surrogate (${codePoint(ch)}), which cannot be encoded in UTF-8`
  if (cp === 0x2028 || cp === 0x2029) return `${codePoint(ch)} (a line or paragraph separator)`
  if (/\p{Cc}/u.test(ch)) return `${codePoint(ch)} (a control character)`
  if (
    (cp >= 0x202a && cp <= 0x202e) ||
    (cp >= 0x2066 && cp <= 0x2069) ||
    cp === 0x200e ||
    cp === 0x200f ||
    cp === 0x061c
  ) {
    return `${codePoint(ch)} (a bidirectional control character, which can make an id display as another)`
  }
  if (cp === 0xfeff) return `${codePoint(ch)} (a byte order mark / zero-width no-break space)`
  if ((cp >= 0x200b && cp <= 0x200d) || cp === 0x2060) return `${codePoint(ch)} (a zero-width character)`
  if (/\p{Cf}/u.test(ch)) return `${codePoint(ch)} (an invisible format character)`
  if (/[\p{Z}]/u.test(ch) && ch !== ' ') return `${codePoint(ch)} (a space other than the ASCII space)`
  if (cp === 0xfffd) return `${codePoint(ch)} (the replacement character, a sign of text that was not valid UTF-8)`
  if (/\p{Co}/u.test(ch) || (cp & 0xfffe) === 0xfffe || (cp >= 0xfdd0 && cp <= 0xfdef))
    return `${codePoint(ch)} (a private-use character or noncharacter)`
  if (FORBIDDEN_ASCII.has(ch)) return `${JSON.stringify(ch)}`
  return undefined
}

/**
 * Why `id`'s characters are not allowed (everything but the length), or undefined. The JSON
 * Schema of ids carries the length; this is the rest, one message naming the first problem.
 */
export function idCharacterProblem(id: string): string | undefined {
  // One linear scan; the per-character explanation only runs from the first forbidden character.
  const at = id.search(FORBIDDEN)
  if (at >= 0) {
    for (const ch of id.slice(at)) {
      const why = characterProblem(ch)
      if (why) return `must not contain ${why}`
    }
    return 'must not contain the characters it contains' // unreachable: FORBIDDEN and characterProblem agree
  }
  if (id.startsWith(' ') || id.endsWith(' ')) return 'must not start or end with a space'
  if (id.normalize('NFC') !== id)
    return `must be in Unicode NFC form (composed characters; send ${JSON.stringify(id.normalize('NFC'))})`
  return undefined
}

/** Why `id` is not a valid rule id (length included), or undefined. */
export function idProblem(id: string): string | undefined {
  const length = [...id].length // code points, as JSON Schema counts
  if (length < 1) return 'must not be empty'
  if (length > ID_MAX_LENGTH) return `must be at most ${ID_MAX_LENGTH} characters long`
  return idCharacterProblem(id)
}

/**
 * The key under which ids (and repository paths) must be unique: locale-free Unicode case folding
 * approximated by upper- then lower-casing (so `ß`/`SS`/`ss`, `ſ`/`s`, the Kelvin sign/`k` and
 * `ς`/`σ` meet), then NFC. Stricter than any case-insensitive file system, never looser.
 */
export function foldId(s: string): string {
  return s.toUpperCase().toLowerCase().normalize('NFC')
}
