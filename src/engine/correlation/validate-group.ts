// Validation of what only a Group has: `MatchCriteria` (named lists of `{GroupID, Match}` giving
// each member its join fields) and the group-level `MinMatchCount` (how many present members
// must be satisfied). Every `GroupID` must name a member.
import type { DataPath } from '../../rules/model.js'
import { checkKeys, describe, nonEmptyString, type ProblemList } from './problems.js'
import { indexOfStep, stepNames, type StepDraft } from './validate-steps.js'
import { isPlainObject } from '../../is-plain-object.js'

const CRITERION_ITEM_KEYS = ['GroupID', 'Match'] as const

/** Join fields per member index, from `MatchCriteria`. */
export function validateMatchCriteria(
  criteria: unknown,
  path: DataPath,
  drafts: readonly StepDraft[],
  out: ProblemList,
): Map<number, Set<string>> {
  const joinFields = new Map<number, Set<string>>()
  if (criteria === undefined) return joinFields
  if (!isPlainObject(criteria)) {
    out.error(
      path,
      `MatchCriteria must be a map from a criterion name to a list of {GroupID, Match}, got ${describe(criteria)}`,
    )
    return joinFields
  }
  for (const [name, items] of Object.entries(criteria)) {
    const criterionPath = [...path, name]
    if (!Array.isArray(items) || items.length === 0) {
      out.error(
        criterionPath,
        `MatchCriteria "${name}" must be a non-empty list of {GroupID, Match}, got ${describe(items)}`,
      )
      continue
    }
    const seen = new Set<string>()
    items.forEach((item, i) => {
      const itemPath = [...criterionPath, i]
      if (!isPlainObject(item)) {
        out.error(
          itemPath,
          `an item of MatchCriteria "${name}" must be a map with GroupID and Match, got ${describe(item)}`,
        )
        return
      }
      const where = `MatchCriteria "${name}" item ${i + 1}`
      checkKeys(item, CRITERION_ITEM_KEYS, itemPath, `a MatchCriteria item`, out)
      const groupId = nonEmptyString(item, 'GroupID', itemPath, where, out)
      const field = nonEmptyString(item, 'Match', itemPath, where, out)
      if (groupId === undefined) return
      const index = indexOfStep(drafts, groupId)
      if (index < 0) {
        out.error(
          [...itemPath, 'GroupID'],
          `GroupID "${groupId}" names no member of the Group (members: ${stepNames(drafts)})`,
        )
        return
      }
      if (seen.has(groupId)) {
        out.error([...itemPath, 'GroupID'], `member "${groupId}" appears more than once in MatchCriteria "${name}"`)
        return
      }
      seen.add(groupId)
      if (field === undefined) return
      let fields = joinFields.get(index)
      if (fields === undefined) joinFields.set(index, (fields = new Set()))
      fields.add(field)
    })
  }
  return joinFields
}

/** The group-level `MinMatchCount`: at most the number of present members. */
export function validateGroupMinMatchCount(
  value: number | undefined,
  path: DataPath,
  drafts: readonly StepDraft[],
  out: ProblemList,
): number {
  const present = drafts.filter((d) => !d.absent).length
  if (value === undefined) return present
  if (value > present) {
    out.error(
      path,
      `the Group's MinMatchCount (${value}) exceeds its number of members that are not Absence members (${present}), so it can never match`,
    )
  }
  return value
}
