// The checks of what a sandboxed process writes on its result pipe (fd 3): one JSON object per line,
// and each per-test event with the types the verdict and detection read. Rule code can write that
// pipe itself, so a frame of the wrong shape must stop its run, never throw in the server.
import { nestedWithin } from '../../json-depth.js'

const str = (v: unknown) => typeof v === 'string'
const strOrNull = (v: unknown) => v === null || typeof v === 'string'

/**
 * Whether a per-test event has the types the verdict reads (rule code can write fd 3, so `{"message":
 * {"toString":1}}` must stop the run, not throw in the verdict's string building: a 500).
 */
export function wellFormed(e: Record<string, unknown>): boolean {
  switch (e.t) {
    case 'start':
      return str(e.fn)
    case 'fn':
      // an output nested past what JSON.stringify can write back would make the verdict a 500
      return (
        str(e.fn) && strOrNull(e.error) && (e.traceback === undefined || str(e.traceback)) && nestedWithin(e.output)
      )
    case 'import_error':
      return str(e.message) && strOrNull(e.file) && (e.line === null || typeof e.line === 'number')
    case 'mock_error':
    case 'log_error':
    case 'data_model_error':
      return str(e.message)
    case 'missing_module':
      return str(e.module) && strOrNull(e.file) && (e.line === null || typeof e.line === 'number')
    case 'module_error':
      return (
        str(e.message) &&
        (e.code === undefined || e.code === 'PythonMissingRule') &&
        strOrNull(e.file) &&
        (e.line === null || typeof e.line === 'number') &&
        (e.column === null || typeof e.column === 'number')
      )
    case 'module':
      return Array.isArray(e.functions) && e.functions.every(str)
    case 'r':
      return isObject(e.f) && Object.values(e.f).every((v) => Array.isArray(v) && v.length === 2 && strOrNull(v[1]))
    case 'end':
      // A `check` job's end carries none of these.
      return (
        (e.stdout === undefined || str(e.stdout)) &&
        (e.stderr === undefined || str(e.stderr)) &&
        (e.outputChars === undefined || typeof e.outputChars === 'number') &&
        (e.outputExceeded === undefined || typeof e.outputExceeded === 'boolean') &&
        (e.logType === undefined || strOrNull(e.logType)) &&
        (e.dataModel === undefined || strOrNull(e.dataModel))
      )
    default:
      return false
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

export function parseLine(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line)
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}
