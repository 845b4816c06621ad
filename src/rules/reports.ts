// `Reports` lists as the format reads them (detections.md §5.2): `CIS: [3.5]` is accepted and read
// as strings. A number is spelled as the file wrote it (`3.10` stays "3.10", where PyYAML and JS
// would both give the float 3.1), so a control id survives; without the source, as JS prints it.
import { isMap, isScalar, isSeq, type Document } from 'yaml'

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v)

/** Whether a file's `Reports` value holds a number in one of its lists. */
export function reportsHaveNumbers(reports: unknown): boolean {
  if (!isObject(reports)) return false
  return Object.values(reports).some((list) => Array.isArray(list) && list.some((v) => typeof v === 'number'))
}

/**
 * The `Reports` value with the numbers of its lists as strings. With the parsed document, each
 * number takes the text of its plain scalar (`3.10`, `010`); otherwise JS's spelling of the number.
 * Anything that is not a map of lists is returned as it is (the schema check reports it).
 */
export function reportsAsStrings(reports: unknown, doc?: Document): unknown {
  if (!reportsHaveNumbers(reports)) return reports
  const node = doc?.get('Reports', true)
  const out: Record<string, unknown> = {}
  for (const [key, list] of Object.entries(reports as Record<string, unknown>)) {
    if (!Array.isArray(list)) {
      out[key] = list
      continue
    }
    const seq = isMap(node) ? node.get(key, true) : undefined
    out[key] = list.map((v, i) => {
      if (typeof v !== 'number') return v
      const item = isSeq(seq) ? seq.get(i, true) : undefined
      return isScalar(item) && item.type === 'PLAIN' && typeof item.source === 'string' ? item.source : String(v)
    })
  }
  return out
}
