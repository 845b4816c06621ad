// Validation of the member list of a Group or the step list of a Sequence: keys and types of each
// entry, unique IDs, at least two entries, at least one that is not an Absence, counts that can
// be met. Produces drafts that the block validators complete with join fields.
import type { DataPath } from '../../rules/model.js'
import type { BlockShape } from './model.js'
import { checkKeys, describe, nonEmptyString, positiveInteger, type ProblemList } from './problems.js'
import { isPlainObject } from '../../is-plain-object.js'

const STEP_KEYS = ['ID', 'RuleID', 'MinMatchCount', 'MaxMatchCount', 'Absence'] as const

export interface StepDraft {
  /** undefined when the entry's ID was invalid (the entry is then left out of name checks). */
  id: string | undefined
  ruleId: string | undefined
  index: number
  minMatchCount: number
  maxMatchCount: number | null
  absent: boolean
}

function stepNoun(shape: BlockShape): string {
  return shape === 'Group' ? 'member' : 'step'
}

export function validateSteps(list: unknown, path: DataPath, shape: BlockShape, out: ProblemList): StepDraft[] {
  const noun = stepNoun(shape)
  if (!Array.isArray(list)) {
    out.error(path, `${shape} must be a list of ${noun}s, got ${describe(list)}`)
    return []
  }
  if (list.length < 2) {
    out.error(path, `a ${shape} needs at least two ${noun}s, found ${list.length}`)
  }
  const drafts: StepDraft[] = []
  const firstIndexOfId = new Map<string, number>()
  list.forEach((entry, index) => {
    const entryPath = [...path, index]
    if (!isPlainObject(entry)) {
      out.error(entryPath, `a ${shape} ${noun} must be a map with ID and RuleID, got ${describe(entry)}`)
      return
    }
    const where = `${shape} ${noun} ${index + 1}`
    checkKeys(entry, STEP_KEYS, entryPath, `a ${shape} ${noun}`, out)
    const id = nonEmptyString(entry, 'ID', entryPath, where, out)
    const ruleId = nonEmptyString(entry, 'RuleID', entryPath, where, out)
    const min = positiveInteger(entry, 'MinMatchCount', entryPath, where, out)
    const max = positiveInteger(entry, 'MaxMatchCount', entryPath, where, out)
    let absent = false
    if (entry.Absence !== undefined) {
      if (typeof entry.Absence === 'boolean') absent = entry.Absence
      else
        out.error(
          [...entryPath, 'Absence'],
          `Absence in ${where} must be true or false, got ${describe(entry.Absence)}`,
        )
    }
    if (min !== undefined && max !== undefined && max < min) {
      out.error(
        [...entryPath, 'MaxMatchCount'],
        `MaxMatchCount (${max}) of ${noun} ${describe(id ?? index + 1)} is below its MinMatchCount (${min}), so it can never match`,
      )
    }
    if (absent && (min !== undefined || max !== undefined)) {
      // The evaluator counts any signal of an absent step as a failure, whatever the counts say.
      const key = min !== undefined ? 'MinMatchCount' : 'MaxMatchCount'
      out.warning(
        [...entryPath, key],
        `${key} has no effect on ${noun} ${describe(id ?? index + 1)}: it is an Absence ${noun}, which fails on any signal`,
      )
    }
    if (id !== undefined) {
      const first = firstIndexOfId.get(id)
      if (first !== undefined) {
        out.error(
          [...entryPath, 'ID'],
          `${noun} ID "${id}" is used more than once (first by ${noun} ${first + 1}); IDs must be unique`,
        )
      } else {
        firstIndexOfId.set(id, index)
      }
    }
    drafts.push({ id, ruleId, index, minMatchCount: min ?? 1, maxMatchCount: max ?? null, absent })
  })
  if (drafts.length === list.length && list.length > 0 && drafts.every((d) => d.absent)) {
    out.error(
      path,
      `every ${noun} of the ${shape} is an Absence ${noun}; at least one must be present for the rule to match`,
    )
  }
  return drafts
}

/** The index of the draft named `id`, for `From`/`To`/`GroupID` checks (first one if duplicated). */
export function indexOfStep(drafts: readonly StepDraft[], id: string): number {
  return drafts.findIndex((d) => d.id === id)
}

/** A short list of the valid names, for messages about a name that is not one of them. */
export function stepNames(drafts: readonly StepDraft[]): string {
  const names = drafts.flatMap((d) => (d.id === undefined ? [] : [JSON.stringify(d.id)]))
  return names.length === 0 ? 'none' : names.join(', ')
}
