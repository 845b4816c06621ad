// YAML reading and writing for rule files and YAML-text API fields: YAML 1.2 core schema (`On`,
// `yes`, dates stay strings), nesting refused before the composer recurses and aliases bounded by
// their expanded size (a bomb is an error, not an outage), every parse error with line and column,
// and a way back from a data path to its location.
import { load as loadJsYaml } from 'js-yaml'
import YAML, {
  type Document,
  type DocumentOptions,
  isMap,
  isNode,
  isScalar,
  LineCounter,
  type Node,
  type ParseOptions,
  type ScalarTag,
  type SchemaOptions,
} from 'yaml'
import type { DataPath } from './model.js'
import { aliasProblem, expansionBudget } from './yaml-aliases.js'
import { lexedDepthBound, quickDepthBound } from './yaml-depth.js'
import { originalPositions, pyyamlQuotedScalars, REWRITE_FIRST } from './yaml-lenient.js'

const MAX_YAML_DEPTH = 100
/**
 * The pre-parse bounds over-approximate (block nesting counts two levels per indentation column),
 * so they refuse only past twice the bound; the value's exact depth is checked after parsing.
 */
const PRE_PARSE_DEPTH = 2 * MAX_YAML_DEPTH + 2

export interface YamlProblem {
  message: string
  line?: number
  column?: number
}

export interface ParsedYaml {
  doc: Document.Parsed
  lineCounter: LineCounter
  value: unknown
  errors: YamlProblem[]
}

/**
 * Explicit tags read as PyYAML's safe loader reads them, within the decisions of this project:
 * `!!timestamp` is the text as written (timestamps are strings), `!!bool` takes PyYAML's words
 * (`!!bool yes` is true: the author asked for a boolean), `!!float` takes an integer (`!!float 1`).
 * Without a `test`, these are used for explicit tags only; plain scalars resolve by the core schema.
 */
const EXPLICIT_TAGS: ScalarTag[] = [
  {
    tag: 'tag:yaml.org,2002:timestamp',
    resolve: (text, onError) => {
      if (!isTimestamp(text)) onError(`not a timestamp: ${text}`)
      return text
    },
  },
  // PyYAML reads `!!null` as null whatever the text (`!!null ""`, `!!null x`).
  { tag: 'tag:yaml.org,2002:null', resolve: () => null },
  {
    tag: 'tag:yaml.org,2002:bool',
    resolve: (text, onError) => {
      const word = text.toLowerCase()
      if (word === 'true' || word === 'yes' || word === 'on') return true
      if (word === 'false' || word === 'no' || word === 'off') return false
      onError(`not a boolean: ${text}`)
      return text
    },
  },
  {
    tag: 'tag:yaml.org,2002:float',
    resolve: (text, onError) => {
      if (/^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/.test(text)) return Number(text)
      if (/^[-+]?\.(?:inf|Inf|INF)$/.test(text)) return text[0] === '-' ? -Infinity : Infinity
      if (/^\.(?:nan|NaN|NAN)$/.test(text)) return Number.NaN
      onError(`not a number: ${text}`)
      return text
    },
  },
]

/** A plain `=` is YAML 1.1's "value" key, which PyYAML's safe loader (and PAT's) refuses to read. */
const VALUE_KEY: ScalarTag = {
  tag: 'tag:yaml.org,2002:value',
  default: true,
  test: /^=$/,
  resolve: (text, onError) => {
    onError('a plain = is the YAML 1.1 value key, which PyYAML refuses; quote it')
    return text
  },
}

/** PyYAML's timestamp forms, and a date and time that exist (it refuses `2024-02-30`). */
function isTimestamp(text: string): boolean {
  const m =
    /^(\d{4})-(\d\d?)-(\d\d?)(?:(?:[Tt]|[ \t]+)(\d\d?):(\d\d):(\d\d)(?:\.\d*)?(?:[ \t]*(?:Z|[-+]\d\d?(?::\d\d)?))?)?$/.exec(
      text,
    )
  if (!m || (m[4] === undefined && !/^\d{4}-\d\d-\d\d$/.test(text))) return false
  const [y, mo, d, h = 0, mi = 0, s = 0] = m.slice(1).map((x) => (x === undefined ? undefined : Number(x)))
  const date = new Date(Date.UTC(y!, mo! - 1, d!))
  return date.getUTCMonth() === mo! - 1 && date.getUTCDate() === d! && h! < 24 && mi! < 60 && s! < 60
}

/**
 * YAML 1.2 core schema plus merge keys (`<<`, which PyYAML and PAT apply). `resolveKnownTags` off:
 * `!!binary`, `!!set`, `!!omap` and `!!pairs` have no JSON value and are refused (see parseSource).
 */
const PARSE_OPTIONS: ParseOptions & DocumentOptions & SchemaOptions = {
  version: '1.2',
  schema: 'core',
  customTags: [...EXPLICIT_TAGS, VALUE_KEY],
  resolveKnownTags: false,
  merge: true,
  prettyErrors: false,
  uniqueKeys: true,
  strict: true,
}

function depthOf(v: unknown): number {
  // Iterative, so a pathologically deep value cannot overflow the stack while being measured.
  let max = 0
  const stack: Array<[unknown, number]> = [[v, 1]]
  while (stack.length > 0) {
    const [cur, d] = stack.pop()!
    if (d > max) max = d
    if (d > MAX_YAML_DEPTH) return d
    if (Array.isArray(cur)) for (const x of cur) stack.push([x, d + 1])
    else if (cur && typeof cur === 'object') for (const x of Object.values(cur)) stack.push([x, d + 1])
  }
  return max
}

const TOO_DEEP = `YAML nests deeper than ${MAX_YAML_DEPTH} levels`

/** Results refused by a bound rather than by the syntax. */
const BOUND_REFUSALS = new WeakSet<ParsedYaml>()

/** A text refused before parsing, the problem located at `offset`. */
function refused(text: string, lineCounter: LineCounter, offset: number, message: string): ParsedYaml {
  lineCounter.addNewLine(0)
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lineCounter.addNewLine(i + 1)
  const pos = lineCounter.linePos(offset)
  const result = {
    doc: YAML.parseDocument('', PARSE_OPTIONS),
    lineCounter,
    value: undefined,
    errors: [{ message, line: pos.line, column: pos.col }],
  }
  BOUND_REFUSALS.add(result)
  return result
}

/**
 * The document, value and problems of a YAML text, read as PyYAML reads it where the YAML 1.2 rules
 * are stricter: a quoted scalar continued on lines less indented than the spec requires (even at
 * column 0) is read, folded as usual (rules/yaml-lenient.ts). Every problem has a line and column.
 */
export function parseYaml(text: string): ParsedYaml {
  // Some texts parse without error to another value than PyYAML's (REWRITE_FIRST): rewrite first.
  const strict = REWRITE_FIRST.test(text) ? undefined : parseSource(text, new LineCounter())
  // A text refused by a bound (nesting, aliases) is not read again: the rewrite cannot help it.
  if (strict && (strict.errors.length === 0 || BOUND_REFUSALS.has(strict))) return strict
  const lenient = pyyamlQuotedScalars(text)
  if (!lenient.changed) return strict ?? parseSource(text, new LineCounter())
  return parseSource(lenient.text, originalPositions(lenient.inserted))
}

function parseSource(text: string, lineCounter: LineCounter): ParsedYaml {
  const deep = { offset: 0 }
  if (
    quickDepthBound(text, PRE_PARSE_DEPTH, deep) > PRE_PARSE_DEPTH ||
    lexedDepthBound(text, PRE_PARSE_DEPTH, deep) > PRE_PARSE_DEPTH
  )
    return refused(text, lineCounter, deep.offset, TOO_DEEP)
  let doc: Document.Parsed
  try {
    doc = YAML.parseDocument(text, { ...PARSE_OPTIONS, lineCounter })
  } catch (err) {
    // The parser recurses per nesting level: pathological nesting ends here.
    if (err instanceof RangeError) return refused(text, new LineCounter(), 0, TOO_DEEP)
    throw err
  }
  const at = (offset: number) => {
    const pos = lineCounter.linePos(offset)
    return { line: pos.line, column: pos.col }
  }
  const errors: YamlProblem[] = doc.errors.map((e) => {
    const message = e.message.includes('Maximum call stack') ? TOO_DEEP : e.message.split('\n')[0]!
    return { message, ...at(e.pos[0]) }
  })
  // A tag no schema here knows (`!foo`, `!!binary`) is refused: PyYAML's safe loader refuses the
  // local ones, and the others have no JSON value.
  for (const w of doc.warnings) {
    if (w.code === 'TAG_RESOLVE_FAILED') errors.push({ message: w.message.split('\n')[0]!, ...at(w.pos[0]) })
  }
  let value: unknown
  if (errors.length === 0) {
    const aliases = aliasProblem(doc, expansionBudget(text.length))
    if (aliases)
      return { doc, lineCounter, value: undefined, errors: [{ message: aliases.message, ...at(aliases.offset) }] }
    try {
      // Aliases are bounded above by the size they expand to, so the count check is off.
      value = doc.toJS({ maxAliasCount: -1 })
    } catch (err) {
      // Alias expansion was bounded above; what is left is the reader's own refusal, said as it is.
      errors.push({ message: `the YAML could not be read: ${(err as Error).message}`, ...at(0) })
    }
    if (errors.length === 0 && depthOf(value) > MAX_YAML_DEPTH) {
      errors.push({ message: TOO_DEEP, ...at(0) })
    }
  }
  return { doc, lineCounter, value, errors }
}

/**
 * The value of a YAML text through the fast reader (js-yaml 5, YAML 1.2 core schema, ~3× faster
 * than `yaml`'s document API), or undefined when the text needs the full reader: anything js-yaml
 * refuses (syntax errors, duplicate keys, aliases, unknown tags, empty or multi-document text) and
 * values deeper than the bound. For every text it accepts, the value equals parseYaml(text).value
 * (test/rules/fast-yaml.test.ts checks this differentially); problems are always reported and
 * located by the full reader.
 */
export function loadYamlFast(text: string): { value: unknown } | undefined {
  if (FULL_READER_ONLY.test(text)) return undefined
  let value: unknown
  try {
    value = loadJsYaml(text, { maxAliases: 0, maxDepth: MAX_YAML_DEPTH })
  } catch {
    return undefined
  }
  return depthOf(value) > MAX_YAML_DEPTH || hasNullKey(value) ? undefined : { value }
}

/**
 * Texts where the two readers are known to differ, found by the differential test: explicit tags
 * (`!!float 1`), numbers that overflow a double (js-yaml keeps them as strings), document end
 * markers, indented `---` (js-yaml takes it for a marker; it is a plain scalar), merge keys (`<<`, applied by the full reader only), a plain `=` (refused, as PyYAML
 * refuses it) and an escaped line break before an empty line (js-yaml drops the empty line; the
 * full reader keeps it, as PyYAML does). A false alarm only costs the slower reader.
 */
const FULL_READER_ONLY =
  /(?:^|[\s[{,])!|\d[eE][+-]?\d{3}|\d{300}|^\.\.\.|^[ \t]+(?:---|\.\.\.)(?:[ \t]|$)|<<|(?:^|[\s[{,])=(?:$|[\s,\]}:])|\\\r?\n[ \t]*\r?\n/m

/** A null key (`~:`, `: v`) is "null" for js-yaml and "" for `yaml`: such texts take the full reader. */
function hasNullKey(v: unknown): boolean {
  const stack = [v]
  while (stack.length > 0) {
    const cur = stack.pop()
    if (Array.isArray(cur)) stack.push(...cur)
    else if (cur && typeof cur === 'object') {
      if (Object.hasOwn(cur, 'null')) return true
      stack.push(...Object.values(cur))
    }
  }
  return false
}

export interface ReadYaml {
  value: unknown
  /** Empty when the text was read; else why not, each with its line and column. */
  errors: YamlProblem[]
  /** The full reader's parse, when it was needed (to locate paths later without parsing again). */
  parsed?: ParsedYaml
}

/**
 * A rule file's text as every reader of rule files reads it (the loader, `validate`, `test`): the
 * fast reader when it accepts the text, else the full reader with its located problems.
 */
export function readYaml(text: string): ReadYaml {
  const fast = loadYamlFast(text)
  if (fast) return { value: fast.value, errors: [] }
  const parsed = parseYaml(text)
  return { value: parsed.errors.length > 0 ? undefined : parsed.value, errors: parsed.errors, parsed }
}

/** Line and column (1-based) of the node at `path` in a parsed document, or of its nearest parent. */
export function locate(
  parsed: Pick<ParsedYaml, 'doc' | 'lineCounter'>,
  path: DataPath,
): { line: number; column: number } | undefined {
  const at = (offset: number) => {
    const pos = parsed.lineCounter.linePos(offset)
    return { line: pos.line, column: pos.col }
  }
  for (let n = path.length; n >= 0; n--) {
    // A map entry is located at its key (where a person looks for `Severity:`), a list item at itself.
    if (n > 0) {
      const parent = n === 1 ? parsed.doc.contents : parsed.doc.getIn(path.slice(0, n - 1) as unknown[], true)
      if (isMap(parent)) {
        const pair = parent.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === path[n - 1])
        if (pair && isNode(pair.key) && pair.key.range) return at(pair.key.range[0])
      }
    }
    const node = parsed.doc.getIn(path.slice(0, n) as unknown[], true) as Node | undefined
    if (isNode(node) && node.range) return at(node.range[0])
  }
  return undefined
}

/** Stable serialization: same value → same bytes; two-space indentation; one trailing newline. */
export function stringifyYaml(value: unknown): string {
  return YAML.stringify(value, { version: '1.2', indent: 2, lineWidth: 0, aliasDuplicateObjects: false })
}

export function stringifyDocument(doc: Document): string {
  const text = doc.toString({ indent: 2, lineWidth: 0 })
  return text.endsWith('\n') ? text.replace(/\n+$/, '\n') : `${text}\n`
}
