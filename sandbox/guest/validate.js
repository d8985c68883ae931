// Guest side: CRD validation rules (x-orch-validations) compiled per schema node and run over an object.
//
// compileRules walks the schema once, compiling each rule with `self` (and `oldSelf`) typed from its node,
// and estimates the per-CRD total as each rule's estimate times the number of times its node can occur
// (the product of the maxItems/maxProperties bounds above it), as Kubernetes does. validateObject walks a
// new object (and the old one, correlated by property, map key or list-map key) in one crossing.

import { Optional } from 'cel-lib/optional.js'
import { checkRuleShape, costErrorMessage, createTotalCost, goRule } from './rule-checks.js'

const typeName = (s) => (s['x-orch-int-or-string'] ? 'string' : s.type ?? 'object')

export function createValidator({ compile, programs, runProgram, encode }) {
  const sets = new Map()
  let nextSet = 1

  function compileRules(req) {
    const defs = req.definitions ?? {}
    const resolve = (s) => {
      let n = s
      for (let i = 0; n && n.$ref && i < 32; i++) n = defs[n.$ref]
      return n ?? {}
    }
    const errors = []
    const rules = []
    const schemaPath = req.schemaPath ?? 'openAPIV3Schema'
    const totalCost = createTotalCost(req.limits.perCrdEstimate)
    // $ref schemas may be recursive (built-in kinds): a schema already on the path links back to its node
    // (the walk over a value is bounded by the value's depth); its rules are counted once.
    const ancestors = new Map()
    // uncorrelatable: the path of the outermost list above that is not list-type map (oldSelf has no counterpart)
    function walk(schema, path, at, cardinality, uncorrelatable) {
      const s = resolve(schema)
      if (ancestors.has(s)) return ancestors.get(s)
      // hasRules: whether this subtree holds any rule (true while unknown, so recursive links stay visited)
      const node = { schema: s, rules: [], props: undefined, items: undefined, additional: undefined, hasRules: true }
      ancestors.set(s, node)
      const list = Array.isArray(s['x-orch-validations']) ? s['x-orch-validations'] : []
      // As Kubernetes: the shape of every rule of a node is checked first; CEL compiles only when it is sound.
      const shapes = list.map((r, i) => checkRuleShape(r, s, resolve, `${at}.x-orch-validations[${i}]`))
      const shapeErrors = shapes.flatMap((x) => x.errors)
      errors.push(...shapeErrors)
      if (shapeErrors.length === 0) {
        list.forEach((r, i) => {
          const ruleAt = `${at}.x-orch-validations[${i}]`
          const compiled = compileRule(r, s, defs, ruleAt, errors, req.limits, { cardinality, totalCost, uncorrelatable })
          if (!compiled) return
          compiled.fieldPath = shapes[i].fieldPath
          node.rules.push(compiled)
          rules.push({ field: ruleAt, estimate: compiled.estimate, cardinality })
        })
      }
      if (s.properties) {
        node.props = {}
        for (const [k, v] of Object.entries(s.properties)) node.props[k] = walk(v, `${path}.${k}`, `${at}.properties[${k}]`, cardinality, uncorrelatable)
      }
      if (s.items) {
        const itemsUncorrelatable = uncorrelatable ?? (s['x-orch-list-type'] === 'map' ? undefined : at)
        node.items = walk(s.items, `${path}[*]`, `${at}.items`, cardinality * (s.maxItems ?? req.limits.unboundedCardinality), itemsUncorrelatable)
      }
      if (s.additionalProperties && typeof s.additionalProperties === 'object') {
        const card = cardinality * (s.maxProperties ?? req.limits.unboundedCardinality)
        node.additional = walk(s.additionalProperties, `${path}[*]`, `${at}.additionalProperties`, card, uncorrelatable)
      }
      ancestors.delete(s)
      const children = [...Object.values(node.props ?? {}), node.items, node.additional].filter(Boolean)
      node.hasRules = node.rules.length > 0 || children.some((c) => c.hasRules)
      return node
    }
    const root = walk(req.schema, '', schemaPath, 1, undefined)
    errors.push(...totalCost.errors(schemaPath))
    const total = totalCost.total
    if (errors.length) return { ok: false, errors, rules, total }
    const id = nextSet++
    sets.set(id, { root, defs })
    return { ok: true, id, rules, total }
  }

  /** Compiles one rule (and its messageExpression); errors worded as Kubernetes' CRD validation words them. */
  function compileRule(r, s, defs, at, errors, limits, { cardinality, totalCost, uncorrelatable }) {
    const before = errors.length
    const invalid = (f, detail) => errors.push({ type: 'FieldValueInvalid', field: `${at}.${f}`, message: `Invalid value: ${goRule(r)}: ${detail}` })
    const forbidden = (f, detail) => errors.push({ type: 'FieldValueForbidden', field: `${at}.${f}`, message: `Forbidden: ${detail}` })
    // A transition rule is one that mentions oldSelf (Kubernetes decides the same from the checked AST).
    const transition = /\boldSelf\b/.test(r.rule)
    // Every rule of a node shares one environment (self and oldSelf declared), so the node's values are
    // converted once per object for all its rules; optionalOldSelf rules need oldSelf as optional<T>.
    const env = { variables: { self: { schema: s }, oldSelf: { schema: s, optional: Boolean(r.optionalOldSelf) } }, definitions: defs }
    const c = compile({ env, expr: r.rule, estimator: {} })
    if (!c.ok) {
      invalid('rule', `compilation failed: ${c.issues ?? c.message}`)
      return undefined
    }
    if (c.type !== 'bool') {
      invalid('rule', 'cel expression must evaluate to a bool')
      return undefined
    }
    const program = programs.get(c.id)
    // As Kubernetes: each rule's estimate counts once per possible occurrence of its node.
    const cost = c.estimate.max * cardinality
    if (cost > limits.perExpressionEstimate) forbidden('rule', costErrorMessage('estimated rule cost', cost, limits.perExpressionEstimate))
    totalCost.observe(`${at}.rule`, cost)
    let messageProgram
    if (typeof r.messageExpression === 'string' && r.messageExpression !== '') {
      const m = compile({ env, expr: r.messageExpression, estimator: {} })
      if (!m.ok) invalid('messageExpression', `messageExpression compilation failed: ${m.issues ?? m.message}`)
      else if (m.type !== 'string') invalid('messageExpression', 'messageExpression must evaluate to a string')
      else {
        const mCost = m.estimate.max * cardinality
        if (mCost > limits.perExpressionEstimate) forbidden('messageExpression', costErrorMessage('estimated messageExpression cost', mCost, limits.perExpressionEstimate))
        totalCost.observe(`${at}.messageExpression`, mCost)
        messageProgram = programs.get(m.id)
      }
    }
    if (transition && uncorrelatable !== undefined) {
      errors.push({ type: 'FieldValueInvalid', field: `${at}.rule`, message: `Invalid value: ${JSON.stringify(r.rule)}: oldSelf cannot be used on the uncorrelatable portion of the schema within ${uncorrelatable}` })
    } else if (!transition && r.optionalOldSelf !== undefined && r.optionalOldSelf !== null) {
      errors.push({ type: 'FieldValueInvalid', field: `${at}.optionalOldSelf`, message: `Invalid value: ${Boolean(r.optionalOldSelf)}: may not be set if oldSelf is not used in rule` })
    }
    if (errors.length > before) return undefined
    return { rule: r, program, messageProgram, transition, estimate: c.estimate }
  }

  function validateObject(req) {
    const set = sets.get(req.id)
    if (!set) return { ok: false, code: 'SANDBOX_ERR_INTERNAL', message: `no rule set ${req.id}` }
    const budget = { remaining: req.limits.perObjectRuntime, perCall: req.limits.perCallRuntime, used: 0, exhausted: false }
    const errors = []
    visit(set.root, req.obj, req.old, req.hasOld, req.basePath ?? '', errors, budget)
    return { ok: true, errors, cost: budget.used }
  }

  function visit(node, value, old, hasOld, path, errors, budget) {
    if (!node || !node.hasRules || value === undefined || value === null || budget.exhausted) return
    const s = node.schema
    const converted = new Map()
    const valuesFor = (r) => {
      const types = r.program.e.types
      let v = converted.get(types)
      // oldSelf is converted only when a transition rule asks for it
      if (!v) {
        v = {
          self: types.convert(s, value),
          get oldSelf() {
            const o = hasOld ? types.convert(s, old) : undefined
            Object.defineProperty(this, 'oldSelf', { value: o })
            return o
          },
        }
        converted.set(types, v)
      }
      return v
    }
    for (const r of node.rules) {
      if (budget.exhausted) return
      if (r.transition && !hasOld && !r.rule.optionalOldSelf) continue
      runRule(r, s, valuesFor(r), hasOld, path, errors, budget)
    }
    if (node.props && typeof value === 'object' && !Array.isArray(value)) {
      for (const [k, child] of Object.entries(node.props)) {
        if (!(k in value)) continue
        const oldHas = hasOld && old && typeof old === 'object' && k in old
        visit(child, value[k], oldHas ? old[k] : undefined, oldHas, join(path, k), errors, budget)
      }
    }
    if (node.additional && typeof value === 'object' && !Array.isArray(value)) {
      for (const k of Object.keys(value)) {
        const oldHas = hasOld && old && typeof old === 'object' && k in old
        visit(node.additional, value[k], oldHas ? old[k] : undefined, oldHas, `${path}[${k}]`, errors, budget)
      }
    }
    if (node.items && Array.isArray(value)) {
      const correlate = correlator(s, old, hasOld)
      value.forEach((item, i) => {
        const o = correlate(item)
        visit(node.items, item, o.value, o.found, `${path}[${i}]`, errors, budget)
      })
    }
  }

  function runRule(r, s, values, hasOld, path, errors, budget) {
    const p = r.program
    const ctx = { self: values.self }
    if (r.transition) ctx.oldSelf = values.oldSelf
    if (r.transition && r.rule.optionalOldSelf) ctx.oldSelf = hasOld ? Optional.of(values.oldSelf) : Optional.none()
    const limit = Math.min(budget.perCall, budget.remaining)
    const res = runProgram(p, ctx, limit)
    budget.used += res.cost ?? 0
    budget.remaining -= res.cost ?? 0
    if (res.ok && res.value === true) return
    const field = r.fieldPath ? path + r.fieldPath : path
    const f = field.replace(/^\./, '')
    if (!res.ok && res.code === 'CEL_ERR_COST_BUDGET') {
      budget.exhausted = limit < budget.perCall || budget.remaining <= 0
      const msg = budget.exhausted ? 'validation failed due to running out of cost budget, no further validation rules will be run' : `rule cost exceeds budget: ${r.rule.rule}`
      errors.push({ type: 'FieldValueInvalid', field: f, message: `Invalid value: "${typeName(s)}": ${msg}` })
      return
    }
    if (!res.ok) {
      // as Kubernetes' validation.go: on the rule's node (not its fieldPath), named by message or rule
      errors.push({ type: 'FieldValueInvalid', field: path.replace(/^\./, ''), message: `Invalid value: "${typeName(s)}": ${evalErrorDetail(res.message, r.rule)}` })
      return
    }
    errors.push({ type: r.rule.reason ?? 'FieldValueInvalid', field: f, message: failureMessage(r, s, ctx, budget) })
  }

  /** cel-go's runtime error text followed by the rule, worded as Kubernetes' CRD validation words it. */
  function evalErrorDetail(message, rule) {
    const named = rule.message?.length ? rule.message.trim() : rule.rule.trim()
    message = message.replace(/^No such key: index out of bounds, index (-?\d+).*$/, 'index out of bounds: $1').replace(/^No such key: /, 'no such key: ')
    if (/^no such overload/.test(message)) return `'${message}': call arguments did not match a supported operator, function or macro signature for rule: ${named}`
    return `${message} evaluating rule: ${named}`
  }

  function failureMessage(r, s, msgVars, budget) {
    let msg = r.rule.message?.trim() ? r.rule.message : `failed rule: ${r.rule.rule.trim()}`
    if (r.messageProgram) {
      const m = runProgram(r.messageProgram, msgVars, Math.min(budget.perCall, budget.remaining))
      budget.used += m.cost ?? 0
      budget.remaining -= m.cost ?? 0
      if (m.ok && typeof m.value === 'string' && m.value.trim() && !/[\r\n]/.test(m.value)) msg = m.value
    }
    switch (r.rule.reason) {
      case 'FieldValueForbidden':
        return `Forbidden: ${msg}`
      case 'FieldValueRequired':
        return `Required value: ${msg}`
      case 'FieldValueDuplicate':
        return `Duplicate value: "${typeName(s)}"`
      default:
        return `Invalid value: "${typeName(s)}": ${msg}`
    }
  }

  function correlator(s, old, hasOld) {
    if (!hasOld || !Array.isArray(old)) return () => ({ found: false })
    const type = s['x-orch-list-type']
    if (type === 'map') {
      const keys = s['x-orch-list-map-keys'] ?? []
      const key = (x) => JSON.stringify(keys.map((k) => x?.[k]))
      const byKey = new Map(old.map((x) => [key(x), x]))
      return (item) => (byKey.has(key(item)) ? { found: true, value: byKey.get(key(item)) } : { found: false })
    }
    if (type === 'set') {
      const set = new Set(old.map((x) => JSON.stringify(x)))
      return (item) => (set.has(JSON.stringify(item)) ? { found: true, value: item } : { found: false })
    }
    return () => ({ found: false })
  }

  const join = (path, k) => `${path}.${k}`

  function releaseRules(req) {
    sets.delete(req.id)
    return { ok: true }
  }

  void encode
  return { compileRules, validateObject, releaseRules }
}
