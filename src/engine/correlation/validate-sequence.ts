// Validation of a Sequence's `Transitions` and the order they give the steps: each transition links
// its `From` step to its `To` step (in either direction of the list: the order is the transitions',
// not the list's), names existing steps, has a positive time frame and at most one `Match` item
// (`On`, or `From` and `To`; none = the link joins nothing). Produces the order, join fields and windows.
import type { DataPath } from '../../rules/model.js'
import { checkKeys, describe, nonEmptyString, positiveInteger, type ProblemList } from './problems.js'
import { indexOfStep, stepNames, type StepDraft } from './validate-steps.js'
import { isPlainObject } from '../../is-plain-object.js'

const TRANSITION_KEYS = ['ID', 'From', 'To', 'WithinTimeFrameMinutes', 'Match'] as const
const MATCH_KEYS = ['On', 'From', 'To'] as const

export interface SequenceLinks {
  /** Join fields per step, keyed by the step's position in the Sequence list. */
  joinFields: Map<number, Set<string>>
  /** The list positions of the steps in sequence order (the order the evaluator walks). */
  order: number[]
  /** gapMinutes[i]: the window from order[i] to order[i + 1]. */
  gapMinutes: number[]
}

interface Link {
  from: number
  to: number
  transition: number
  within: number | undefined
}

export function validateTransitions(
  transitions: unknown,
  path: DataPath,
  drafts: readonly StepDraft[],
  lookbackMinutes: number,
  out: ProblemList,
): SequenceLinks {
  const joinFields = new Map<number, Set<string>>()
  const listOrder = drafts.map((_, i) => i)
  const implicit = () => ({ joinFields, order: listOrder, gapMinutes: listOrder.slice(1).map(() => lookbackMinutes) })
  const addField = (index: number, field: string) => {
    let fields = joinFields.get(index)
    if (fields === undefined) joinFields.set(index, (fields = new Set()))
    fields.add(field)
  }
  if (transitions === undefined) return implicit()
  if (!Array.isArray(transitions)) {
    out.error(path, `Transitions must be a list, got ${describe(transitions)}`)
    return implicit()
  }
  const transitionIds = new Map<string, number>()
  // next[i] / previous[i]: the link leaving / entering step i (each step has at most one of each).
  const next = new Map<number, Link>()
  const previous = new Map<number, Link>()
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
    // No Match: the transition orders its steps and sets the window, but joins nothing.
    const match =
      transition.Match === undefined
        ? undefined
        : validateTransitionMatch(transition.Match, [...tPath, 'Match'], where, out)
    if (fromIndex < 0 || toIndex < 0) return
    if (fromIndex === toIndex) {
      out.error([...tPath, 'To'], `${where} goes from "${from}" to itself; a transition links two different steps`)
      return
    }
    const leaving = next.get(fromIndex)
    if (leaving !== undefined) {
      const other = drafts[leaving.to]!.id
      out.error(
        tPath,
        other === to
          ? `${where} links "${from}" to "${to}" again (transition ${leaving.transition + 1} already does)`
          : `${where} goes from "${from}" to "${to}", but transition ${leaving.transition + 1} already goes from "${from}" to "${other}"; a sequence is one chain, so a step is followed by one step only`,
      )
      return
    }
    const entering = previous.get(toIndex)
    if (entering !== undefined) {
      out.error(
        tPath,
        `${where} goes from "${from}" to "${to}", but transition ${entering.transition + 1} already goes from "${drafts[entering.from]!.id}" to "${to}"; a sequence is one chain, so a step is preceded by one step only`,
      )
      return
    }
    const link: Link = { from: fromIndex, to: toIndex, transition: t, within }
    next.set(fromIndex, link)
    previous.set(toIndex, link)
    if (match !== undefined) {
      addField(fromIndex, match.fromField)
      addField(toIndex, match.toField)
    }
  })
  // The chains the links make, each from a step nothing leads to; a step on none is on a cycle.
  const chains: number[][] = []
  const onChain = new Set<number>()
  for (const head of listOrder) {
    if (previous.has(head)) continue
    const chain = [head]
    onChain.add(head)
    for (let link = next.get(head); link !== undefined; link = next.get(link.to)) {
      chain.push(link.to)
      onChain.add(link.to)
    }
    chains.push(chain)
  }
  const cycle = listOrder.filter((i) => !onChain.has(i))
  if (cycle.length > 0) {
    out.error(
      path,
      `the transitions form a cycle through ${cycle.map((i) => JSON.stringify(drafts[i]!.id)).join(', ')}; a sequence must have a first step`,
    )
    return implicit()
  }
  // Chains follow one another in the list order of their first steps (with transitions in list
  // order this is the list itself); where one chain ends and the next begins, the implicit link
  // joins nothing and its window is the lookback.
  const order = chains.flat()
  const gapMinutes = order.slice(1).map((to, i) => {
    const link = next.get(order[i]!)
    return link !== undefined && link.to === to ? (link.within ?? lookbackMinutes) : lookbackMinutes
  })
  if (transitions.length > 0 && out.errors.length === 0) {
    // Legal, but usually a forgotten transition.
    for (let i = 0; i + 1 < order.length; i++) {
      if (next.get(order[i]!)?.to === order[i + 1]) continue
      out.warning(
        path,
        `no transition links "${drafts[order[i]!]!.id}" to "${drafts[order[i + 1]!]!.id}": that link joins nothing and its window is LookbackWindowMinutes (${lookbackMinutes})`,
      )
    }
  }
  return { joinFields, order, gapMinutes }
}

function validateTransitionMatch(
  match: unknown,
  path: DataPath,
  where: string,
  out: ProblemList,
): { fromField: string; toField: string } | undefined {
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
