// The two OpenAPI linters api users run, called in-process on a document object: Redocly's
// `recommended` ruleset (@redocly/openapi-core, what `redocly lint` runs) and Spectral's
// `spectral:oas` (@stoplight/spectral-core with the bundled rulesets). Both rulesets ship inside
// the packages, nothing is fetched: the document has no external $ref and telemetry is the CLI's.
import { createConfig, lintFromString } from '@redocly/openapi-core'
import spectralCore from '@stoplight/spectral-core'
import spectralParsers from '@stoplight/spectral-parsers'
import spectralRulesets from '@stoplight/spectral-rulesets'

// CommonJS packages: their named exports are reached through the default export under ESM.
const { Document, Spectral } = spectralCore
const { Json } = spectralParsers
const { oas } = spectralRulesets

export interface LintProblem {
  rule: string
  severity: 'error' | 'warn' | 'info' | 'hint'
  message: string
  where: string
}

export async function redoclyLint(doc: unknown): Promise<LintProblem[]> {
  const config = await createConfig({ extends: ['recommended'] })
  const problems = await lintFromString({
    source: JSON.stringify(doc, null, 2),
    absoluteRef: '/openapi.json',
    config,
  })
  return problems
    .filter((p) => !p.ignored)
    .map((p) => ({
      rule: p.ruleId,
      severity: p.severity === 'error' ? 'error' : 'warn',
      message: p.message,
      where: p.location[0]?.pointer ?? '',
    }))
}

const SPECTRAL_SEVERITY = ['error', 'warn', 'info', 'hint'] as const

export async function spectralLint(doc: unknown): Promise<LintProblem[]> {
  const spectral = new Spectral()
  spectral.setRuleset({ extends: [[oas as never, 'recommended']] } as never)
  const results = await spectral.run(new Document(JSON.stringify(doc, null, 2), Json, '/openapi.json'))
  return results.map((r) => ({
    rule: String(r.code),
    severity: SPECTRAL_SEVERITY[r.severity] ?? 'error',
    message: r.message,
    where: r.path.join('/'),
  }))
}
