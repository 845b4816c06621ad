// Where a position inside a string value (a line and column of a query's SQL) is in the YAML file
// that holds it, from where its key is: in a literal block (`Query: |`) the value's line n is the
// n-th line after the key's, its columns after the block's indentation; a one-line value starts
// after the key's colon. Other layouts (folded or multi-line quoted) point at the value itself.

export function positionInValue(
  text: string,
  valueAt: { line: number; column: number },
  inValue: { line: number; column?: number },
): { line: number; column: number } {
  const lines = text.split('\n')
  const keyLine = lines[valueAt.line - 1] ?? ''
  if (/:[ \t]*\|[-+0-9]*[ \t]*(#.*)?$/.test(keyLine.slice(valueAt.column - 1))) {
    // The block's indentation: its first line's (the value's own leading spaces come after it).
    const first = lines.slice(valueAt.line).find((l) => l.trim() !== '') ?? ''
    const indent = first.length - first.trimStart().length
    return { line: valueAt.line + inValue.line, column: indent + (inValue.column ?? 1) }
  }
  // `valueAt` is the key's position (`Query: SELECT …`): the value starts after the colon and spaces.
  const rest = keyLine.slice(valueAt.column - 1)
  const value = /^[^:]*:[ \t]*(['"]?)/.exec(rest)
  if (inValue.line === 1 && value && value[0].length < rest.length) {
    return { line: valueAt.line, column: valueAt.column + value[0].length + (inValue.column ?? 1) - 1 }
  }
  return valueAt
}
