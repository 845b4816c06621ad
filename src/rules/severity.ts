// The severities a rule may have, in rising order (file form: upper case). A module of its own so
// that the field table (fields.ts) can name them without importing the model, which names the kinds.
export const SEVERITIES = ['INFO', 'LOW', 'MEDIUM', 'HIGH', 'CRITICAL'] as const
export type Severity = (typeof SEVERITIES)[number]
