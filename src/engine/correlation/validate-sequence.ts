// Validation of a Sequence's `Transitions`: each links a step to the step right after it in list
// order (the list order IS the sequence), names existing steps, has a positive time frame and
// exactly one `Match` item (`On`, or `From` and `To`). Produces join fields and per-link windows.
import type { DataPath } from '../../rules/model.js'
import { checkKeys, describe, nonEmptyString, positiveInteger, type ProblemList } from './problems.js'
import { indexOfStep, stepNames, type StepDraft } from './validate-steps.js'
import { isPlainObject } from '../../is-plain-object.js'

const TRANSITION_KEYS = ['ID', 'From', 'To', 'WithinTimeFrameMinutes', 'Match'] as const
const MATCH_KEYS = ['On', 'From', 'To'] as const

export interface SequenceLinks {
  joinFields: Map<number, Set<string>>
  /** gapMinutes[i]: the window from step i to step i + 1. */
  gapMinutes: number[]
}

export function validateTransitions(
  transitions: unknown,
  path: DataPath,
  drafts: readonly StepDraft[],
  lookbackMinutes: number,
  out: ProblemList,
): SequenceLinks {
  const joinFields = new Map<number, Set<string>>()
  const gapMinutes: number[] = drafts.slice(1).map(() => lookbackMinutes)
  const addField = (index: number, field: string) => {
    let fields = joinFields.get(index)
    if (fields === undefined) joinFields.set(index, (fields = new Set()))
    fields.add(field)
  }
  if (transitions === undefined) return { joinFields, gapMinutes }
  if (!Array.isArray(transitions)) {
    out.error(path, `Transitions must be a list, got ${describe(transitions)}`)
    return { joinFields, gapMinutes }
  }
  const transitionIds = new Map<string, number>()
  const linkOwner = new Map<number, number>()
  transitions.forEach((transition, t) => {
    const tPath = [...path, t]
    if (!isPlainObject(transition)) {
      out.error(tPath, `a transition must be a map with ID, From, To and Match, got ${describe(transition)}`)
      return
    }
    const where = `transition ${t + 1}`
    checkKeys(transition, TRANSITION_KEYS, tPath, 'a transition', out)
    const id = nonEmptyString(transition, 'ID', tPath, where, out)
    if (id !== undefined) {
      const first = transitionIds.get(id)
      if (first !== undefined)
        out.error([...tPath, 'ID'], `transition ID "${id}" is used more than once (first by transition ${first + 1})`)
      else transitionIds.set(id, t)
    }
    const from = nonEmptyString(transition, 'From', tPath, where, out)
    const to = nonEmptyString(transition, 'To', tPath, where, out)
    const within = positiveInteger(transition, 'WithinTimeFrameMinutes', tPath, where, out)
    if (within !== undefined && within > lookbackMinutes) {
      out.warning(
        [...tPath, 'WithinTimeFrameMinutes'],
        `WithinTimeFrameMinutes (${within}) of ${where} exceeds LookbackWindowMinutes (${lookbackMinutes}); signals older than the lookback window are never seen`,
      )
    }
    const fromIndex = from === undefined ? -1 : indexOfStep(drafts, from)
    const toIndex = to === undefined ? -1 : indexOfStep(drafts, to)
    if (from !== undefined && fromIndex < 0) {
      out.error([...tPath, 'From'], `From "${from}" names no step of the Sequence (steps: ${stepNames(drafts)})`)
    }
    if (to !== undefined && toIndex < 0) {
      out.error([...tPath, 'To'], `To "${to}" names no step of the Sequence (steps: ${stepNames(drafts)})`)
    }
    const match = validateTransitionMatch(transition.Match, [...tPath, 'Match'], where, out)
    if (fromIndex < 0 || toIndex < 0) return
    if (toIndex !== fromIndex + 1) {
      // Steps are ordered by the list; a transition elsewhere would give a second, conflicting order.
      const next = drafts[fromIndex + 1]?.id
      out.error(
        [...tPath, 'To'],
        next === undefined
          ? `${where} goes from "${from}", the last step; a transition must link a step to the one right after it in the Sequence list`
          : `${where} goes from "${from}" to "${to}"; a transition must link a step to the one right after it in the Sequence list (here "${next}")`,
      )
      return
    }
    const owner = linkOwner.get(fromIndex)
    if (owner !== undefined) {
      out.error(tPath, `${where} links "${from}" to "${to}" again (transition ${owner + 1} already does)`)
      return
    }
    linkOwner.set(fromIndex, t)
    if (within !== undefined) gapMinutes[fromIndex] = within
    if (match !== undefined) {
      addField(fromIndex, match.fromField)
      addField(toIndex, match.toField)
    }
  })
  if (transitions.length > 0 && out.errors.length === 0) {
    // Legal (the link falls back to the implicit chain), but usually a forgotten transition.
    for (let i = 0; i + 1 < drafts.length; i++) {
      if (linkOwner.has(i)) continue
      out.warning(
        path,
        `no transition links "${drafts[i]!.id}" to "${drafts[i + 1]!.id}": that link joins nothing and its window is LookbackWindowMinutes (${lookbackMinutes})`,
      )
    }
  }
  return { joinFields, gapMinutes }
}

function validateTransitionMatch(
  match: unknown,
  path: DataPath,
  where: string,
  out: ProblemList,
): { fromField: string; toField: string } | undefined {
  if (match === undefined) {
    out.error(
      path,
      `Match is required in ${where}: a list with exactly one item, {On: field} or {From: field, To: field}`,
    )
    return undefined
  }
  if (!Array.isArray(match) || match.length !== 1) {
    const got = Array.isArray(match) ? `${match.length} items` : describe(match)
    out.error(
      path,
      `Match in ${where} must be a list with exactly one item, {On: field} or {From: field, To: field}; got ${got}`,
    )
    return undefined
  }
  const item: unknown = match[0]
  const itemPath = [...path, 0]
  if (!isPlainObject(item)) {
    out.error(
      itemPath,
      `the Match item of ${where} must be {On: field} or {From: field, To: field}, got ${describe(item)}`,
    )
    return undefined
  }
  checkKeys(item, MATCH_KEYS, itemPath, 'a transition Match item', out)
  const hasOn = item.On !== undefined
  const hasFromTo = item.From !== undefined || item.To !== undefined
  if (hasOn && hasFromTo) {
    out.error(
      itemPath,
      `the Match item of ${where} has both On and From/To; use On for the same field on both sides, or From and To`,
    )
    return undefined
  }
  if (hasOn) {
    const on = nonEmptyString(item, 'On', itemPath, `the Match item of ${where}`, out)
    return on === undefined ? undefined : { fromField: on, toField: on }
  }
  if (!hasFromTo) {
    out.error(itemPath, `the Match item of ${where} needs On, or both From and To`)
    return undefined
  }
  const fromField = nonEmptyString(item, 'From', itemPath, `the Match item of ${where}`, out)
  const toField = nonEmptyString(item, 'To', itemPath, `the Match item of ${where}`, out)
  return fromField === undefined || toField === undefined ? undefined : { fromField, toField }
}
