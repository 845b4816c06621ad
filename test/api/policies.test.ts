// Policies through the API beyond the contract suite: the file a POST writes is the format
// panther_analysis_tool reads (`PolicyID`, `ResourceTypes`, tests with `Resource`, the module
// beside it), a failing test answers 400 with the policy's verdicts, a policy pushed with plain git
// is served, listed by resource type and counted valid in /status, and the OpenAPI document has it.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { parse } from 'yaml'
import { gitAs } from '../helpers/git-as.js'
import { startInProcess } from '../helpers/in-process.js'
import { SAMPLE_BODIES, tempDir } from '../helpers/rulekeeper.js'

t.test('POST /policies writes the policy in the format the tool reads', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const res = await s.request('POST', '/policies', SAMPLE_BODIES.policy('AWS.S3.Versioned'), {
    'X-Change-Reason': 'SEC-1 versioned buckets',
  })
  t.equal(res.status, 200, res.text)
  const yml = parse(s.git('show', 'HEAD:policies/aws/AWS.S3.Versioned.yml'))
  t.same(yml, {
    AnalysisType: 'policy',
    Filename: 'AWS.S3.Versioned.py',
    PolicyID: 'AWS.S3.Versioned',
    DisplayName: 'Policy AWS.S3.Versioned',
    Enabled: true,
    ResourceTypes: ['AWS.S3.Bucket'],
    Severity: 'Medium',
    Tests: [
      { Name: 'versioned', ExpectedResult: true, Resource: { Name: 'logs', Versioning: 'Enabled' } },
      { Name: 'not versioned', ExpectedResult: false, Resource: { Name: 'logs', Versioning: 'Suspended' } },
    ],
  })
  t.match(s.git('show', 'HEAD:policies/aws/AWS.S3.Versioned.py'), /^def policy\(resource\):/)
  t.match(s.git('log', '-1', '--format=%s'), /policy rule AWS\.S3\.Versioned/)
})

t.test('a failing policy test answers 400 with the verdicts and saves nothing', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const body = SAMPLE_BODIES.policy('AWS.S3.Wrong', {
    tests: [{ name: 'suspended but expected compliant', expectedResult: true, resource: { Versioning: 'Suspended' } }],
  })
  const res = await s.request('POST', '/policies', body)
  t.equal(res.status, 400, res.text)
  t.match(res.body.testResults, [
    { name: 'suspended but expected compliant', passed: false, functions: { detection: { output: false } } },
  ])
  const bad = await s.request(
    'POST',
    '/policies',
    SAMPLE_BODIES.policy('AWS.S3.Bad', { tests: [{ name: 'x', expectedResult: true, log: {} }] }),
  )
  t.equal(bad.status, 400, 'a policy test takes a resource, not a log')
  t.match(JSON.stringify(bad.body.errors), /resource/)
  t.equal((await s.request('GET', '/policies/AWS.S3.Wrong')).status, 404)
})

t.test(
  'a policy pushed with plain git is served, filtered by resource type, and counted valid in /status',
  async (t) => {
    const s = await startInProcess()
    t.teardown(() => s.close())
    const work = path.join(tempDir('rk-policy-push-'), 'w')
    execFileSync('git', ['clone', '-q', s.gitdir, work])
    fs.mkdirSync(path.join(work, 'policies'), { recursive: true })
    fs.writeFileSync(
      path.join(work, 'policies/kms.yml'),
      'AnalysisType: policy\nFilename: kms.py\nPolicyID: AWS.KMS.Rotation\nEnabled: true\nResourceTypes:\n  - AWS.KMS.Key\nSeverity: Low\nSuppressions:\n  - arn:aws:kms:*:key/ignored\nTests:\n  - Name: rotated\n    ExpectedResult: true\n    Resource: { KeyRotationStatus: true }\n',
    )
    fs.writeFileSync(
      path.join(work, 'policies/kms.py'),
      'def policy(resource):\n    return resource["KeyRotationStatus"] is True\n',
    )
    const git = (...args: string[]) => gitAs({ name: 'P', email: 'p@x' }, work, ...args)
    git('add', '-A')
    git('commit', '-q', '-m', 'a policy by hand')
    git('push', '-q', 'origin', 'HEAD:main')
    const status = (await s.request('POST', '/reconcile')).body
    t.equal(status.lastAppliedRevision, git('rev-parse', 'HEAD').trim())
    t.match(status.files, { invalid: 0, unsupported: 1 }, 'the template helper only (its query is served)')
    t.same(status.invalidFiles, [])

    const got = await s.request('GET', '/policies/AWS.KMS.Rotation')
    t.equal(got.status, 200)
    t.match(got.body, {
      id: 'AWS.KMS.Rotation',
      severity: 'LOW',
      resourceTypes: ['AWS.KMS.Key'],
      suppressions: ['arn:aws:kms:*:key/ignored'],
      tests: [{ name: 'rotated', expectedResult: true, resource: { KeyRotationStatus: true }, mocks: [] }],
    })
    const hit = await s.request('GET', '/policies?resource-type=AWS.KMS.Key')
    t.same(
      hit.body.results.map((r: { id: string }) => r.id),
      ['AWS.KMS.Rotation'],
    )
    const miss = await s.request('GET', '/policies?resource-type=AWS.S3.Bucket')
    t.same(miss.body.results, [])
    t.equal((await s.request('GET', '/rules/AWS.KMS.Rotation')).status, 404, 'a policy is not a Python rule')
  },
)

t.test('the OpenAPI document has the policy routes and schemas', async (t) => {
  const s = await startInProcess()
  t.teardown(() => s.close())
  const doc = (await s.request('GET', '/openapi.json')).body
  t.ok(doc.paths['/policies'], '/policies')
  t.ok(doc.paths['/policies/{id}'], '/policies/{id}')
  const schema = doc.components.schemas.Policy
  t.ok(schema.properties.resourceTypes)
  t.notOk(schema.properties.threshold, 'no alert grouping fields')
  t.same(schema.properties.tests.items.required, ['name', 'expectedResult', 'resource'])
})
