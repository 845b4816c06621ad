// Shared shape of benchmark results. Every bench module (bench/*.bench.ts) exports a default
// function that measures its workload AND a baseline in the same run, and returns results that
// bench/run.ts collects into bench/results/latest.json and BENCHMARKS.md.

export interface BenchResult {
  /** Short name, e.g. "simple-rule evaluation (compiled)". */
  name: string
  /** The target as written in the spec, e.g. ">= 1M events/s". */
  target: string
  /** The measured value and its unit. */
  value: number
  unit: string
  /** The baseline measured in the same run, when the target is a ratio or for context. */
  baseline?: { name: string; value: number; unit: string }
  /** value / baseline (or the ratio the target is about). */
  ratio?: number
  /** Whether the target was met. */
  pass: boolean
  notes?: string
}

export interface BenchContext {
  /** Prints a progress line (stderr). */
  progress(message: string): void
  /** A scratch directory for this bench module, removed afterwards. */
  tmpDir: string
  /** Scale factor: 1 for the full workload; the CI smoke run uses a small one. */
  scale: number
}

export type BenchModule = (ctx: BenchContext) => Promise<BenchResult[]>

/** Median, p99 etc. of a list of numbers (ms). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN
  const s = [...values].sort((a, b) => a - b)
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))
  return s[i]!
}
