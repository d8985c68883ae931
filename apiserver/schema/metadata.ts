// Kubernetes' ObjectMeta rules (names, namespace, labels, annotations, finalizers, owner references) with its messages.
import * as fe from './field-errors.js'
import type { FieldError, ResourceDefinition } from './types.js'

export type NameValidation = NonNullable<ResourceDefinition['nameValidation']>

const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?'
const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`
const dns1035LabelFmt = '[a-z]([-a-z0-9]*[a-z0-9])?'
const qualifiedNameFmt = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'
const labelValueFmt = `(${qualifiedNameFmt})?`
const full = (fmt: string): RegExp => new RegExp(`^${fmt}$`)
const dns1123Label = full(dns1123LabelFmt)
const dns1123Subdomain = full(dns1123SubdomainFmt)
const dns1035Label = full(dns1035LabelFmt)
const qualifiedName = full(qualifiedNameFmt)
const labelValue = full(labelValueFmt)

const qualifiedNameMsg = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
export const totalAnnotationSizeLimit = 256 * 1024

/** As validation.RegexError: `msg (e.g. 'a',  or 'b', regex used for validation is 'fmt')`. */
function regexError (msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`
  const eg = examples.map((e, i) => `${i > 0 ? ' or ' : ''}'${e}', `).join('')
  return `${msg} (e.g. ${eg}regex used for validation is '${fmt}')`
}
const maxLenError = (n: number): string => `must be no more than ${n} characters`

export function isDNS1123Label (value: string): string[] {
  const errs: string[] = []
  if (value.length > 63) errs.push(maxLenError(63))
  if (!dns1123Label.test(value)) {
    errs.push(regexError("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character", dns1123LabelFmt, 'my-name', '123-abc'))
  }
  return errs
}

export function isDNS1123Subdomain (value: string): string[] {
  const errs: string[] = []
  if (value.length > 253) errs.push(maxLenError(253))
  if (!dns1123Subdomain.test(value)) {
    errs.push(regexError("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character", dns1123SubdomainFmt, 'example.com'))
  }
  return errs
}

export function isDNS1035Label (value: string): string[] {
  const errs: string[] = []
  if (value.length > 63) errs.push(maxLenError(63))
  if (!dns1035Label.test(value)) {
    errs.push(regexError("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character", dns1035LabelFmt, 'my-name', 'abc-123'))
  }
  return errs
}

/** As IsValidPathSegmentName (or its prefix form, which only forbids '/' and '%'). */
export function isPathSegmentName (value: string, prefix = false): string[] {
  if (!prefix && (value === '.' || value === '..')) return [`may not be '${value}'`]
  return ['/', '%'].filter((c) => value.includes(c)).map((c) => `may not contain '${c}'`)
}

export function isQualifiedName (value: string): string[] {
  const errs: string[] = []
  const parts = value.split('/')
  let name: string
  if (parts.length === 1) name = parts[0]
  else if (parts.length === 2) {
    const prefix = parts[0]
    name = parts[1]
    if (prefix.length === 0) errs.push('prefix part must be non-empty')
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`))
  } else {
    return [`a qualified name ${regexError(qualifiedNameMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`]
  }
  if (name.length === 0) errs.push('name part must be non-empty')
  else if (name.length > 63) errs.push(`name part ${maxLenError(63)}`)
  if (!qualifiedName.test(name)) errs.push(`name part ${regexError(qualifiedNameMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc')}`)
  return errs
}

export function isValidLabelValue (value: string): string[] {
  const errs: string[] = []
  if (value.length > 63) errs.push(maxLenError(63))
  if (!labelValue.test(value)) {
    errs.push(regexError("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", labelValueFmt, 'MyValue', 'my_value', '12345'))
  }
  return errs
}

/**
 * Messages for a name (or, with `prefix`, a generateName: a trailing '-' is allowed since random
 * characters follow it).
 */
export function validateName (name: string, rule: NameValidation = 'subdomain', prefix = false): string[] {
  const v = prefix && rule !== 'path' ? name.replace(/-$/, 'a') : name
  switch (rule) {
    case 'label': return isDNS1123Label(v)
    case 'dns1035': return isDNS1035Label(v)
    case 'path': return isPathSegmentName(v, prefix)
    default: return isDNS1123Subdomain(v)
  }
}

/** Label keys and values; errors name the map (`metadata.labels`), as Kubernetes does. */
export function validateLabels (labels: unknown, path = 'metadata.labels'): FieldError[] {
  if (labels === null || typeof labels !== 'object') return []
  const errs: FieldError[] = []
  for (const [k, v] of Object.entries(labels as Record<string, unknown>)) {
    for (const m of isQualifiedName(k)) errs.push(fe.invalid(path, k, m))
    if (typeof v === 'string') for (const m of isValidLabelValue(v)) errs.push(fe.invalid(path, v, m))
  }
  return errs
}

/** Annotation keys (qualified names, case-insensitive) and the 256 KiB total of keys and values. */
export function validateAnnotations (annotations: unknown, path = 'metadata.annotations'): FieldError[] {
  if (annotations === null || typeof annotations !== 'object') return []
  const errs: FieldError[] = []
  let size = 0
  for (const [k, v] of Object.entries(annotations as Record<string, unknown>)) {
    for (const m of isQualifiedName(k.toLowerCase())) errs.push(fe.invalid(path, k, m))
    size += Buffer.byteLength(k) + (typeof v === 'string' ? Buffer.byteLength(v) : 0)
  }
  if (size > totalAnnotationSizeLimit) errs.push(fe.tooLongBytes(path, totalAnnotationSizeLimit))
  return errs
}

export function validateFinalizers (finalizers: unknown, path = 'metadata.finalizers'): FieldError[] {
  if (!Array.isArray(finalizers)) return []
  const errs: FieldError[] = []
  for (const f of finalizers) {
    if (typeof f === 'string') for (const m of isQualifiedName(f)) errs.push(fe.invalid(path, f, m))
  }
  if (finalizers.includes('orphan') && finalizers.includes('foregroundDeletion')) {
    errs.push(fe.invalid(path, finalizers, 'finalizer orphan and foregroundDeletion cannot be both set'))
  }
  return errs
}

export function validateOwnerReferences (refs: unknown, path = 'metadata.ownerReferences'): FieldError[] {
  if (!Array.isArray(refs)) return []
  const errs: FieldError[] = []
  const controllers: string[] = []
  refs.forEach((raw, i) => {
    const ref = (raw ?? {}) as Record<string, unknown>
    const p = fe.index(path, i)
    const str = (k: string): string => typeof ref[k] === 'string' ? ref[k] as string : ''
    const apiVersion = str('apiVersion')
    const version = apiVersion.includes('/') ? apiVersion.split('/')[1] : apiVersion
    if (version === '') errs.push(fe.invalid(fe.child(p, 'apiVersion'), apiVersion, 'version must not be empty'))
    if (str('kind') === '') errs.push(fe.invalid(fe.child(p, 'kind'), str('kind'), 'kind must not be empty'))
    if (str('name') === '') errs.push(fe.invalid(fe.child(p, 'name'), str('name'), 'name must not be empty'))
    if (str('uid') === '') errs.push(fe.invalid(fe.child(p, 'uid'), str('uid'), 'uid must not be empty'))
    if (ref.controller === true) controllers.push(str('name'))
  })
  if (controllers.length > 1) {
    errs.push(fe.invalid(path, refs, `Only one reference can have Controller set to true. Found "true" in references for ${controllers.join(' and ')}`))
  }
  return errs
}

export interface ObjectMetaOptions {
  namespaced: boolean
  /** On create a missing name is allowed when generateName is set (the store fills it in). */
  isCreate: boolean
  nameValidation?: NameValidation
}

/** ObjectMeta rules of ValidateObjectMetaAccessor; errors are under `metadata.`. */
export function validateObjectMeta (meta: unknown, opts: ObjectMetaOptions): FieldError[] {
  const m = (meta !== null && typeof meta === 'object' ? meta : {}) as Record<string, unknown>
  const rule = opts.nameValidation ?? 'subdomain'
  const errs: FieldError[] = []
  const name = typeof m.name === 'string' ? m.name : ''
  const generateName = typeof m.generateName === 'string' ? m.generateName : ''
  if (generateName !== '') {
    for (const msg of validateName(generateName, rule, true)) errs.push(fe.invalid('metadata.generateName', generateName, msg))
  }
  if (name === '') {
    if (generateName === '' || !opts.isCreate) errs.push(fe.required('metadata.name', 'name or generateName is required'))
  } else {
    for (const msg of validateName(name, rule)) errs.push(fe.invalid('metadata.name', name, msg))
  }
  const namespace = typeof m.namespace === 'string' ? m.namespace : ''
  if (opts.namespaced) {
    if (namespace === '') errs.push(fe.required('metadata.namespace'))
    else for (const msg of isDNS1123Label(namespace)) errs.push(fe.invalid('metadata.namespace', namespace, msg))
  } else if (namespace !== '') {
    errs.push(fe.forbidden('metadata.namespace', 'not allowed on this type'))
  }
  if (typeof m.generation === 'number' && m.generation < 0) {
    errs.push(fe.invalid('metadata.generation', m.generation, 'must be greater than or equal to 0'))
  }
  errs.push(...validateLabels(m.labels), ...validateAnnotations(m.annotations),
    ...validateOwnerReferences(m.ownerReferences), ...validateFinalizers(m.finalizers))
  return errs
}

/** Fields an update may not change (ValidateObjectMetaUpdate): `field is immutable`. */
export function validateObjectMetaUpdate (newMeta: unknown, oldMeta: unknown): FieldError[] {
  const n = (newMeta ?? {}) as Record<string, unknown>
  const o = (oldMeta ?? {}) as Record<string, unknown>
  const errs: FieldError[] = []
  for (const f of ['name', 'namespace', 'uid', 'creationTimestamp']) {
    if (o[f] !== undefined && n[f] !== o[f]) errs.push(fe.invalid(`metadata.${f}`, n[f] ?? '', 'field is immutable'))
  }
  if (o.deletionGracePeriodSeconds !== undefined && n.deletionGracePeriodSeconds !== o.deletionGracePeriodSeconds) {
    errs.push(fe.invalid('metadata.deletionGracePeriodSeconds', n.deletionGracePeriodSeconds ?? null, 'field is immutable; may only be changed via deletion'))
  }
  return errs
}
