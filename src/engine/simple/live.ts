// The simple engine's `live` member: a rule evaluates in-process, one record at a time, from its
// file data alone; it carries that data and this module's URL so the rule worker builds the same
// evaluator on its thread (`compileOnWorker`), and the conditions every match meets (the prefilter).
// The compilation is cached by the rule's file object, so an unchanged rule is not compiled again.
import type { LiveCompiler } from '../engine.js'
import type { WorkerCompile } from '../live.js'
import { simpleEvaluator } from './live-evaluator.js'
import { requirementsOf } from './requirements.js'
import { compileRule } from './rule.js'

/** The rule's evaluator and requirements from its file data: in-process and on the rule worker alike. */
export const compileOnWorker: WorkerCompile = (data) => {
  const evaluate = simpleEvaluator(data)
  if (typeof evaluate !== 'function') return evaluate
  const tree = compileRule(data).rule?.tree
  return { evaluate, requires: tree ? requirementsOf(tree) : [] }
}

export const simpleLive: LiveCompiler = (rule) => {
  const data = rule.file.data
  const compiled = compileOnWorker(data)
  if ('error' in compiled) return compiled
  return { ...compiled, offload: { module: import.meta.url, data } }
}
