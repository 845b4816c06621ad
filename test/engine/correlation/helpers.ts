// Shared builders for the correlation-engine tests: rules in file form from YAML or from compact
// step lists, test items from a step → value → times shorthand, and an EngineContext over a map.
import { parseDocument } from 'yaml'
import type { EngineContext } from '../../../src/engine/engine.js'
import { compileDetection, type CompiledDetection } from '../../../src/engine/correlation/index.js'
import { runCorrelationTest } from '../../../src/engine/correlation/run-tests.js'
import type { RuleFile, RuleKind, SupportFile } from '../../../src/rules/model.js'

export function parseYaml(text: string): Record<string, unknown> {
  return parseDocument(text, { version: '1.2', schema: 'core' }).toJS() as Record<string, unknown>
}

export function ruleFile(data: Record<string, unknown>, kind: RuleKind = 'correlation'): RuleFile {
  return { kind, id: String(data.RuleID ?? ''), path: '', data }
}

export function contextOf(rules: RuleFile[], support: Array<SupportFile & { id: string }> = []): EngineContext {
  return {
    findRule: (id) => rules.find((r) => r.id === id),
    findSupport: (id) => support.find((s) => s.id === id),
  }
}

const SCHEDULE = { RateMinutes: 60, TimeoutMinutes: 5 }

/** A step or member with RuleID `R.<ID>` and the given extra keys. */
export function step(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ID: id, RuleID: `R.${id}`, ...extra }
}

/** A Sequence detection in file form. */
export function sequenceData(
  steps: Record<string, unknown>[],
  transitions?: Record<string, unknown>[],
  block: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    RuleID: 'Test.Sequence',
    Detection: [
      { Sequence: steps, ...(transitions ? { Transitions: transitions } : {}), Schedule: SCHEDULE, ...block },
    ],
  }
}

/** A transition from → to joined on `on` (or on From/To fields when `on` is a pair). */
export function link(
  from: string,
  to: string,
  within?: number,
  on: string | [string, string] = 'user',
): Record<string, unknown> {
  const match = typeof on === 'string' ? { On: on } : { From: on[0], To: on[1] }
  return {
    ID: `${from} FOLLOWED BY ${to}`,
    From: from,
    To: to,
    ...(within ? { WithinTimeFrameMinutes: within } : {}),
    Match: [match],
  }
}

/** A Group detection in file form; every member listed in `joined` joins on `user`. */
export function groupData(
  members: Record<string, unknown>[],
  joined: string[] = members.map((m) => String(m.ID)),
  block: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    RuleID: 'Test.Group',
    Detection: [
      {
        Group: members,
        MatchCriteria: { user: joined.map((id) => ({ GroupID: id, Match: 'user' })) },
        Schedule: SCHEDULE,
        ...block,
      },
    ],
  }
}

/** step → value → times, all on the field `field` (default `user`). */
export type Signals = Record<string, Record<string, Array<number | string>>>

function ruleOutputs(signals: Signals, field = 'user'): unknown[] {
  return Object.entries(signals).map(([id, byValue]) => ({ ID: id, Matches: { [field]: byValue } }))
}

export function compiled(data: Record<string, unknown>): CompiledDetection {
  const result = compileDetection(data)
  if (result.detection === null) {
    throw new Error(`fixture does not compile: ${result.errors.map((e) => e.message).join('; ')}`)
  }
  return result.detection
}

/** The rule's outcome on the signals (null when the test errored). */
export function outcomeOf(data: Record<string, unknown>, signals: Signals | unknown[]) {
  const outputs = Array.isArray(signals) ? signals : ruleOutputs(signals)
  return runCorrelationTest(compiled(data), { Name: 'case', ExpectedResult: true, RuleOutputs: outputs }, 0)
}
