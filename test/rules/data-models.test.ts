// Data models read from the repository (rules/data-models.ts, service/file-records.ts): every
// structural problem with its location, a Method checked against the module, and the way a valid,
// enabled one reaches the Python engine (EngineContext.findDataModel) from an index and a draft.
import t from 'tap'
import { createEngineRegistry } from '../../src/engine/registry.js'
import { checkDataModel, dataModelsByLogType } from '../../src/rules/data-models.js'
import { RuleIndex } from '../../src/rules/rule-index.js'
import { buildFileRecord, type RecordSources } from '../../src/service/file-records.js'
import { draftContext } from '../../src/service/revision-sync.js'
import { indexContext } from '../../src/service/rule-views.js'

const VALID = `AnalysisType: datamodel
DataModelID: Standard.Editor.Audit
DisplayName: Editor audit log
Enabled: true
LogTypes:
  - Editor.Audit
Filename: editor_audit.py
Mappings:
  - Name: actor_user
    Path: user_email
  - Name: source_ip
    Path: $.ip_address
  - Name: event_outcome
    Method: get_event_outcome
`
const MODULE = 'def get_event_outcome(event):\n    return None\n'

function sources(files: Record<string, string>): RecordSources {
  const index = RuleIndex.empty()
  return {
    engines: createEngineRegistry({}),
    ctx: indexContext(index),
    readFile: async (p) => files[p],
  }
}

t.test('checkDataModel: every problem, with its path', async (t) => {
  t.same(checkDataModel({ DataModelID: 'X', Enabled: true, LogTypes: ['A'], Mappings: [] }, undefined), [])
  const problems = checkDataModel(
    {
      DataModelID: '',
      Enabled: 'yes',
      LogTypes: ['A', 3],
      Filename: 'dm.txt',
      Mappings: [
        { Name: 'a', Path: 'x' },
        { Name: 'a', Path: 'y' },
        { Name: 'b' },
        { Name: 'c', Path: 'p', Method: 'm' },
        'nope',
        { Name: 'd', Path: '' },
      ],
    },
    undefined,
  )
  t.same(
    problems.map((p) => p.path),
    [
      ['DataModelID'],
      ['Enabled'],
      ['LogTypes', 1],
      ['Filename'],
      ['Mappings', 1, 'Name'],
      ['Mappings', 2],
      ['Mappings', 3],
      ['Mappings', 4],
      ['Mappings', 5, 'Path'],
    ],
  )
  t.match(checkDataModel({ DataModelID: 'X', Enabled: true, LogTypes: [] }, undefined), [
    { path: ['LogTypes'] },
    { path: ['Mappings'] },
  ])
  const withModule = (source: string | undefined, method = 'get_x') =>
    checkDataModel(
      { DataModelID: 'X', Enabled: true, LogTypes: ['A'], Filename: 'x.py', Mappings: [{ Name: 'n', Method: method }] },
      source,
    )
  t.same(withModule('def get_x(event):\n    return 1\n'), [], 'a def')
  t.same(withModule('async def get_x(event):\n    return 1\n'), [], 'an async def')
  t.same(withModule('from helpers import get_x\n'), [], 'an import')
  t.same(withModule('get_x = lambda e: 1\n'), [], 'an assignment')
  t.match(withModule('def get_y(event):\n    return 1\n'), [
    { path: ['Mappings', 0, 'Method'], message: "Method 'get_x' is not defined in x.py" },
  ])
  t.match(
    withModule('    def get_x(self):\n        return 1\n'),
    [{ path: ['Mappings', 0, 'Method'] }],
    'a method of a class is not the module’s',
  )
  t.match(withModule(undefined), [{ path: ['Filename'], code: 'MissingPythonModule' }])
})

t.test('a data model file is read valid (a support file with its module) or invalid (located)', async (t) => {
  const src = sources({ 'data_models/editor_audit.py': MODULE })
  const ok = await buildFileRecord('data_models/editor_audit.yml', VALID, src)
  t.match(ok, {
    analysisType: 'datamodel',
    id: 'Standard.Editor.Audit',
    errors: [],
    support: { pythonSource: MODULE, pythonPath: 'data_models/editor_audit.py' },
  })
  t.equal(ok!.unsupported, undefined, 'not unsupported')
  const bad = await buildFileRecord(
    'data_models/editor_audit.yml',
    VALID.replace('get_event_outcome\n', 'get_other\n'),
    src,
  )
  t.match(bad!.errors, [{ path: ['Mappings', 2, 'Method'], line: 14, column: 5, message: /get_other/ }])
  const noModule = await buildFileRecord('data_models/editor_audit.yml', VALID, sources({}))
  t.match(noModule!.errors, [{ path: ['Filename'], line: 7, message: /not found beside/ }])
})

t.test('the index and a draft give the engine the enabled data model of a log type', async (t) => {
  const src = sources({ 'data_models/editor_audit.py': MODULE })
  const draft = RuleIndex.empty().draft()
  draft.putFile((await buildFileRecord('data_models/editor_audit.yml', VALID, src))!)
  draft.putFile(
    (await buildFileRecord(
      'data_models/off.yml',
      'AnalysisType: datamodel\nDataModelID: Off\nEnabled: false\nLogTypes: [Off.Log]\nMappings: []\n',
      src,
    ))!,
  )
  draft.putFile(
    (await buildFileRecord(
      'data_models/broken.yml',
      'AnalysisType: datamodel\nDataModelID: Broken\nEnabled: true\nLogTypes: [Broken.Log]\nMappings: [{Name: x}]\n',
      src,
    ))!,
  )
  const ctx = draftContext(draft)
  t.equal(ctx.findDataModel!('Editor.Audit')?.path, 'data_models/editor_audit.yml')
  t.equal(ctx.findDataModel!('Off.Log'), undefined, 'a disabled data model serves nothing')
  t.equal(ctx.findDataModel!('Broken.Log'), undefined, 'an invalid data model serves nothing')
  const index = draft.publish('rev1')
  const ictx = indexContext(index)
  t.equal(ictx.findDataModel!('Editor.Audit')?.data.DataModelID, 'Standard.Editor.Audit')
  t.equal(ictx.findDataModel!('Nope'), undefined)
  t.same(
    index.invalidFiles().map((f) => f.path),
    ['data_models/broken.yml'],
  )
})

t.test('two enabled data models for one log type: the one whose path sorts first serves it', async (t) => {
  const model = (path: string, id: string) => ({
    analysisType: 'datamodel',
    path,
    data: { AnalysisType: 'datamodel', DataModelID: id, Enabled: true, LogTypes: ['L'], Mappings: [] },
  })
  const map = dataModelsByLogType([model('data_models/b.yml', 'B'), model('data_models/a.yml', 'A')])
  t.equal(map.get('L')?.data.DataModelID, 'A')
})
