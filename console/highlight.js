// A small highlighter for the two languages of rule files: YAML (line by line) and Python (a
// tokenizer that carries triple-quoted strings across lines). It returns escaped HTML whose only
// markup is `<span class="t-…">`, so code from the repository is shown, never run or parsed as HTML.

const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }
export const escapeHtml = (s) => s.replace(/[&<>"]/g, (c) => ESC[c])
const span = (cls, text) => `<span class="t-${cls}">${escapeHtml(text)}</span>`

const YAML_TEXT_FIELDS = /^(detection|inlineFilters|alertTitle|alertContext|dynamicSeverities|groupBy)\s*:$/
const YAML_SCALAR = /^(true|false|null|~|yes|no|-?\d+(\.\d+)?([eE][-+]?\d+)?)$/i

function yamlValue(v) {
  // A value: a quoted string, a comment after it, a flow collection or a plain scalar.
  let out = ''
  let rest = v
  while (rest.length) {
    const m = /^(\s+)/.exec(rest)
    if (m) {
      out += m[1]
      rest = rest.slice(m[1].length)
      continue
    }
    if (rest[0] === '#') return out + span('comment', rest)
    const q = /^("(?:[^"\\]|\\.)*"?|'(?:[^']|'')*'?)/.exec(rest)
    if (q) {
      out += span('string', q[1])
      rest = rest.slice(q[1].length)
      continue
    }
    if (/^[[\]{},]/.test(rest)) {
      out += span('punct', rest[0])
      rest = rest.slice(1)
      continue
    }
    if (/^[|>][-+]?\d*\s*$/.test(rest)) return out + span('punct', rest)
    const word = /^[^\s,[\]{}#]+(?:\s+[^\s,[\]{}#]+)*/.exec(rest)
    const w = word ? word[0] : rest[0]
    out += YAML_SCALAR.test(w) ? span('number', w) : /^[&*]/.test(w) ? span('anchor', w) : span('plain', w)
    rest = rest.slice(w.length)
  }
  return out
}

/** YAML to highlighted HTML. Lines inside a block scalar (`|`, `>`) are shown as a string. */
export function highlightYaml(text) {
  const lines = text.split('\n')
  const out = []
  let blockIndent = -1 // the indent of the key owning an open block scalar
  let blockIsYaml = false // the YAML-text fields of a rule hold YAML: highlighted as such
  for (const line of lines) {
    const indent = line.length - line.trimStart().length
    if (blockIndent >= 0) {
      if (line.trim() === '' || indent > blockIndent) {
        if (!blockIsYaml) {
          out.push(span('string', line))
          continue
        }
      } else blockIndent = -1
    }
    if (/^\s*#/.test(line)) {
      out.push(span('comment', line))
      continue
    }
    if (/^(---|\.\.\.)\s*$/.test(line)) {
      out.push(span('punct', line))
      continue
    }
    const m = /^(\s*)((?:-\s+)*)((?:"[^"]*"|'[^']*'|[^\s#'"][^:#]*?)\s*:)(?=\s|$)(.*)$/.exec(line)
    if (m) {
      const [, lead, dashes, key, value] = m
      out.push(`${lead}${dashes ? span('punct', dashes) : ''}${span('key', key)}${yamlValue(value)}`)
      if (blockIndent < 0 && /^\s*[|>][-+]?\d*\s*(#.*)?$/.test(value)) {
        blockIndent = indent + dashes.length
        blockIsYaml = YAML_TEXT_FIELDS.test(key)
      }
      continue
    }
    const d = /^(\s*)((?:-\s*)+)(.*)$/.exec(line)
    if (d) out.push(`${d[1]}${span('punct', d[2])}${yamlValue(d[3])}`)
    else out.push(yamlValue(line))
  }
  return out.join('\n')
}

const PY_KEYWORDS = new Set(
  'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case'.split(
    ' ',
  ),
)
const PY_BUILTINS = new Set(
  'abs all any bool dict enumerate filter float getattr hasattr int isinstance len list map max min print range repr round set sorted str sum tuple zip'.split(
    ' ',
  ),
)
const PY_TOKEN =
  /([rRbBuUfF]{0,2}(?:"""|'''))|([rRbBuUfF]{0,2}(?:"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?))|(#[^\n]*)|(\b\d[\d_]*(?:\.\d+)?(?:[eE][-+]?\d+)?j?\b|\b0[xXoObB][\da-fA-F_]+\b)|(@[\w.]+)|([A-Za-z_]\w*)|(\s+)|([^\sA-Za-z_\d])/y

/** Python to highlighted HTML. */
export function highlightPython(text) {
  let out = ''
  let i = 0
  let afterDef = false
  while (i < text.length) {
    PY_TOKEN.lastIndex = i
    const m = PY_TOKEN.exec(text)
    if (!m) {
      out += escapeHtml(text[i])
      i++
      continue
    }
    const [tok, triple, str, comment, num, deco, word] = m
    if (triple) {
      const quote = triple.slice(-3)
      const end = text.indexOf(quote, i + triple.length)
      const stop = end < 0 ? text.length : end + 3
      // One span per line, so the editor's lines stay one line of HTML each.
      out += text
        .slice(i, stop)
        .split('\n')
        .map((l) => (l ? span('string', l) : ''))
        .join('\n')
      i = stop
      continue
    }
    if (str) out += span('string', tok)
    else if (comment) out += span('comment', tok)
    else if (num) out += span('number', tok)
    else if (deco) out += span('anchor', tok)
    else if (word) {
      if (afterDef) out += span('def', tok)
      else if (PY_KEYWORDS.has(tok)) out += span('keyword', tok)
      else if (PY_BUILTINS.has(tok)) out += span('builtin', tok)
      else out += escapeHtml(tok)
      afterDef = tok === 'def' || tok === 'class'
      i += tok.length
      continue
    } else out += escapeHtml(tok)
    if (!/^[ \t]+$/.test(tok)) afterDef = false
    i += tok.length
  }
  return out
}

export const highlight = (lang, text) => (lang === 'python' ? highlightPython(text) : highlightYaml(text))

/** A unified diff to HTML: added, removed and hunk lines marked. */
export function highlightDiff(text) {
  return text
    .split('\n')
    .map((l) =>
      /^(\+\+\+|---)/.test(l)
        ? span('diff-file', l)
        : l.startsWith('@@')
          ? span('diff-hunk', l)
          : l.startsWith('+')
            ? span('diff-add', l)
            : l.startsWith('-')
              ? span('diff-del', l)
              : escapeHtml(l),
    )
    .join('\n')
}
