// The fewest bytes a query result's value takes as JSON, read from its DuckDB vector without
// converting it: string and blob lengths from DuckDB's string headers, list, array and map lengths
// from their entries, struct fields summed. A page checks a row's floor before it converts the row
// (query-engine.ts), so one huge value is refused before it is built on the JavaScript thread.
// Counting stops once past `limit`. node-api keeps the string headers and validity private: read here.
import {
  DuckDBArrayVector,
  DuckDBBlobVector,
  DuckDBListVector,
  DuckDBMapVector,
  DuckDBStructVector,
  DuckDBVarCharVector,
  type DuckDBVector,
} from '@duckdb/node-api'

interface StringVectorInternals {
  dataView: DataView
  validity: { itemValid(i: number): boolean }
}

/** Bytes of DuckDB's string at row `r` (a string_t: its length is the first 4 bytes of 16). */
function stringBytes(v: DuckDBVector, r: number): number | null {
  const inner = v as unknown as StringVectorInternals
  if (!inner.validity.itemValid(r)) return null
  return inner.dataView.getUint32(r * 16, true)
}

/** The floor of a run of `n` items of `child` from `first` (brackets and commas included). */
function itemsFloor(child: DuckDBVector, first: number, n: number, limit: number): number {
  let total = 2 + Math.max(0, n - 1)
  for (let i = 0; i < n && total <= limit; i++) total += valueFloor(child, first + i, limit - total)
  return total
}

/** At least how many bytes the value at row `r` of `v` is as JSON (exact enough to bound, never more). */
export function valueFloor(v: DuckDBVector, r: number, limit: number): number {
  if (v instanceof DuckDBVarCharVector) {
    const n = stringBytes(v, r)
    return n === null ? 4 : n + 2
  }
  if (v instanceof DuckDBBlobVector) {
    const n = stringBytes(v, r)
    return n === null ? 4 : Math.ceil(n / 3) * 4 + 2
  }
  if (v instanceof DuckDBListVector) {
    if (!(v as unknown as StringVectorInternals).validity.itemValid(r)) return 4
    return itemsFloor(v.childVector, v.getEntryOffset(r), v.getEntryLength(r), limit)
  }
  if (v instanceof DuckDBMapVector)
    return valueFloor((v as unknown as { listVector: DuckDBListVector }).listVector, r, limit)
  if (v instanceof DuckDBArrayVector) {
    const size = v.type.length
    const child = (v as unknown as { childData: DuckDBVector }).childData
    return itemsFloor(child, r * size, size, limit)
  }
  if (v instanceof DuckDBStructVector) {
    // `{`, then per member its quoted key, `:`, value and `,` or `}`.
    const names = v.type.entryNames
    let total = 1
    for (let k = 0; k < names.length && total <= limit; k++)
      total += Buffer.byteLength(names[k]!) + 4 + valueFloor(v.entryVectorAt(k), r, limit - total)
    return Math.max(total, 2)
  }
  // Numbers, booleans, times, UUIDs…: small and fixed.
  return 1
}
