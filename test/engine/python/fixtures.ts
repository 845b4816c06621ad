// Shared fixtures of the Python engine tests: the example scheduled rule and its global helper
// (read from the shared examples), rules built from inline Python, and a context over them.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parse } from 'yaml'
import type { EngineContext } from '../../../src/engine/engine.js'
import { dataModelsByLogType } from '../../../src/rules/data-models.js'
import type { RuleFile, SupportFile } from '../../../src/rules/model.js'

const EXAMPLES = [fileURLToPath(new URL('../../../examples/rules/', import.meta.url))]

function readExample(rel: string): string {
  for (const root of EXAMPLES) {
    try {
      return readFileSync(root + rel, 'utf8')
    } catch {
      // next root
    }
  }
  throw new Error(`example ${rel} not found`)
}

/** A Python streaming rule on Editor.Audit with this source (and any other fields). */
export const streamingRule = (id: string, source: string, extra: Record<string, unknown> = {}): RuleFile => ({
  kind: 'python',
  id,
  path: `rules/${id}.yml`,
  data: {
    AnalysisType: 'rule',
    RuleID: id,
    Filename: `${id}.py`,
    LogTypes: ['Editor.Audit'],
    Severity: 'Low',
    ...extra,
  },
  pythonSource: source,
  pythonPath: `rules/${id}.py`,
})

export function exampleRule(): RuleFile {
  const data = parse(readExample('scheduled_rules/editor_admin_grants.yml')) as Record<string, unknown>
  return {
    kind: 'scheduled',
    id: String(data.RuleID),
    path: 'scheduled_rules/editor_admin_grants.yml',
    data,
    pythonSource: readExample('scheduled_rules/editor_admin_grants.py'),
    pythonPath: 'scheduled_rules/editor_admin_grants.py',
  }
}

export function exampleGlobal(): SupportFile {
  return {
    analysisType: 'global',
    path: 'global_helpers/editor_helpers.yml',
    data: parse(readExample('global_helpers/editor_helpers.yml')) as Record<string, unknown>,
    pythonSource: readExample('global_helpers/editor_helpers.py'),
  }
}

/** The shared example data model (Editor.Audit: Path, $.-path and Method mappings). */
export function exampleDataModel(): SupportFile {
  return {
    analysisType: 'datamodel',
    path: 'data_models/editor_audit.yml',
    data: parse(readExample('data_models/editor_audit.yml')) as Record<string, unknown>,
    pythonSource: readExample('data_models/editor_audit.py'),
    pythonPath: 'data_models/editor_audit.py',
  }
}

/** A context over support files: globals by GlobalID, data models by DataModelID and log type. */
export function contextWith(...supports: SupportFile[]): EngineContext {
  const byId = new Map(supports.map((g) => [String(g.data.GlobalID ?? g.data.DataModelID), g]))
  const models = dataModelsByLogType(supports)
  return { findRule: () => undefined, findSupport: (id) => byId.get(id), findDataModel: (lt) => models.get(lt) }
}

/** A data model file (`AnalysisType: datamodel`) with its module, if any. */
export function dataModelFile(
  id: string,
  logTypes: string[],
  mappings: Array<Record<string, string>>,
  source?: string,
  extra: Record<string, unknown> = {},
): SupportFile {
  const stem = id.toLowerCase().replace(/\W/g, '_')
  return {
    analysisType: 'datamodel',
    path: `data_models/${stem}.yml`,
    data: {
      AnalysisType: 'datamodel',
      DataModelID: id,
      Enabled: true,
      LogTypes: logTypes,
      Mappings: mappings,
      ...(source !== undefined ? { Filename: `${stem}.py` } : {}),
      ...extra,
    },
    ...(source !== undefined ? { pythonSource: source, pythonPath: `data_models/${stem}.py` } : {}),
  }
}

export function globalFile(id: string, source: string): SupportFile {
  return {
    analysisType: 'global',
    path: `global_helpers/${id}.yml`,
    data: { AnalysisType: 'global', GlobalID: id, Filename: `${id}.py` },
    pythonSource: source,
  }
}

export interface InlineTest {
  name: string
  expected: boolean
  log?: Record<string, unknown>
  mocks?: Array<{ objectName: string; returnValue: unknown }>
  /** The test's `LogType` key. */
  logType?: string
}

/** A scheduled rule in file form around inline Python. */
export function inlineRule(source: string, tests: InlineTest[], extra: Record<string, unknown> = {}): RuleFile {
  return {
    kind: 'scheduled',
    id: 'Test.Inline',
    path: 'scheduled_rules/inline.yml',
    data: {
      AnalysisType: 'scheduled_rule',
      RuleID: 'Test.Inline',
      Enabled: true,
      Filename: 'inline.py',
      ScheduledQueries: [],
      Severity: 'Low',
      Tests: tests.map((t) => ({
        Name: t.name,
        ExpectedResult: t.expected,
        Log: t.log ?? {},
        ...(t.mocks ? { Mocks: t.mocks } : {}),
        ...(t.logType ? { LogType: t.logType } : {}),
      })),
      ...extra,
    },
    pythonSource: source,
    pythonPath: 'scheduled_rules/inline.py',
  }
}
