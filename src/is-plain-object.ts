// The one test for "a JSON object" (a map: not null, not an array) that the configuration, the
// engines and the log sources check parsed values with.

/** Whether `v` is an object other than null or an array (what JSON and YAML call a map). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
