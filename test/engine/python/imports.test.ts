// Which globals travel with a job: import statements of every form are read from the rule's source
// and, recursively, from the globals' own sources; names that are no global are left to Python.
import t from 'tap'
import { collectGlobals, importedNames } from '../../../src/engine/python/imports.js'
import { contextWith, globalFile } from './fixtures.js'

t.test('import forms', async (t) => {
  const source = [
    'import a',
    'import b.sub as bs, c',
    'from d.e import f',
    'from g import (h,',
    '    i)',
    'def rule(event):',
    '    import j  # lazily',
    '    return importlib.import_module("k") and __import__(\'l\')',
    'x = "import nothing here"',
    'from . import relative',
  ].join('\n')
  t.same([...importedNames(source)].sort(), ['a', 'b', 'c', 'd', 'g', 'j', 'k', 'l'])
})

t.test('globals reachable through imports, recursively, and nothing else', async (t) => {
  const ctx = contextWith(
    globalFile('top', 'import middle\n'),
    globalFile('middle', 'from bottom import x\n'),
    globalFile('bottom', 'x = 1\n'),
    globalFile('unused', 'y = 2\n'),
  )
  const found = collectGlobals('import json\nimport top\n', ctx)
  t.same(Object.keys(found).sort(), ['bottom', 'middle', 'top'])
  t.same(found.top, { filename: 'global_helpers/top.py', source: 'import middle\n' })
})

t.test('a cycle between globals terminates', async (t) => {
  const ctx = contextWith(globalFile('ping', 'import pong\n'), globalFile('pong', 'import ping\n'))
  t.same(Object.keys(collectGlobals('import ping', ctx)).sort(), ['ping', 'pong'])
})
