// What the routes that run a rule nobody saved share (POST /replay/preview, POST /test-runs): the
// kind named in the body (its name or API path) and the rule checked as a save checks it, its
// problems reported at their place in the request (under /rule). Nothing is written.
import type { EngineContext, EngineRegistry } from '../engine/engine.js'
import { type FieldProblem, RulekeeperError, validationFailed } from '../errors.js'
import { KINDS } from '../rules/kinds/index.js'
import type { RuleFile } from '../rules/model.js'
import { prepareRule } from './rule-requests.js'

/** A kind named by its name or its API path (`GET /kinds`), else undefined. */
export const kindNamed = (v: unknown) => KINDS.find((k) => k.name === v || k.apiPath === v)

/** The problem of a `kind` that names none. */
export const kindProblem = (): FieldProblem => ({
  path: '/kind',
  message: `kind must be a rule kind's name or API path (${KINDS.map((k) => k.apiPath).join(', ')})`,
})

/** The unsaved rule in file form, or a 400 listing its problems under /rule. */
export async function unsavedRule(
  kind: (typeof KINDS)[number]['name'],
  body: unknown,
  engines: EngineRegistry,
  ctx: EngineContext,
  refused: string,
): Promise<RuleFile> {
  try {
    return (await prepareRule(kind, body, undefined, engines, ctx)).rule
  } catch (err) {
    if (err instanceof RulekeeperError && Array.isArray(err.body.errors))
      throw validationFailed(
        (err.body.errors as FieldProblem[]).map((p) => ({ ...p, path: `/rule${p.path}` })),
        `the rule is not valid; ${refused}`,
      )
    throw err
  }
}
