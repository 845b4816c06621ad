// The cycles of an import graph (depth-first, each back edge one cycle), shown as paths relative to
// `root`: the one search behind the architecture checks of src/ and console/.
import path from 'node:path'

export function importCycles(files: string[], edgesOf: (file: string) => string[], root: string): string[] {
  const edges = new Map(files.map((f) => [f, edgesOf(f)]))
  const state = new Map<string, 'open' | 'done'>()
  const stack: string[] = []
  const cycles: string[] = []
  const visit = (f: string) => {
    state.set(f, 'open')
    stack.push(f)
    for (const to of edges.get(f) ?? []) {
      if (state.get(to) === 'open')
        cycles.push([...stack.slice(stack.indexOf(to)), to].map((x) => path.relative(root, x)).join(' → '))
      else if (!state.has(to)) visit(to)
    }
    stack.pop()
    state.set(f, 'done')
  }
  for (const f of files) if (!state.has(f)) visit(f)
  return cycles
}
