// Computed Table cells of the cluster-operation kinds (PodTemplate, ResourceQuota, ControllerRevision, EndpointSlice, PDB, PriorityClass, RBAC bindings).

import { formatLabels, humanDuration } from './print-format.js'

type Obj = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
type Printer = (object: Obj, now: number) => unknown

/** At most three entries, then ` + N more...`, as the discovery printers cut long lists; `<unset>` when empty. */
function firstThree (values: string[]): string {
  if (values.length === 0) return '<unset>'
  const shown = values.slice(0, 3).join(',')
  return values.length > 3 ? `${shown} + ${values.length - 3} more...` : shown
}

/** printResourceQuota: `resource: used/hard` for every hard limit, sorted; `limits.*` in the Limit column. */
function quotaColumn (limits: boolean): Printer {
  return q => {
    const hard = (q.spec?.hard ?? {}) as Record<string, unknown>
    const used = (q.status?.used ?? {}) as Record<string, unknown>
    return Object.keys(hard).sort()
      .filter(r => r.startsWith('limits.') === limits)
      .map(r => `${r}: ${String(used[r] ?? '0')}/${String(hard[r])}`).join(', ')
  }
}

/** `daemonset.apps/web`: the controlling owner of a ControllerRevision. */
function revisionController (rev: Obj): string {
  const owner = ((rev.metadata?.ownerReferences ?? []) as Obj[]).find(r => r.controller === true)
  if (owner === undefined) return '<none>'
  const apiVersion = String(owner.apiVersion ?? '')
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : ''
  const kind = String(owner.kind ?? '').toLowerCase()
  return `${group === '' ? kind : `${kind}.${group}`}/${String(owner.name ?? '')}`
}

/** extractCSRStatus: Denied over Approved over Pending, then Failed and Issued. */
function csrCondition (csr: Obj): string {
  const types = new Set(((csr.status?.conditions ?? []) as Obj[]).map(c => c.type))
  let out = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending'
  if (types.has('Failed')) out += ',Failed'
  if (typeof csr.status?.certificate === 'string' && csr.status.certificate !== '') out += ',Issued'
  return out
}

/** rbac.SubjectsStrings: users, groups and `namespace/name` service accounts of a binding, each joined with ", ". */
function subjects (kind: string): Printer {
  return b => ((b.subjects ?? []) as Obj[]).filter(s => s.kind === kind)
    .map(s => kind === 'ServiceAccount' ? `${String(s.namespace ?? '')}/${String(s.name ?? '')}` : String(s.name ?? '')).join(', ')
}

const intOrString = (v: unknown): string => (v === undefined || v === null ? 'N/A' : String(v))

export const CLUSTER_PRINTERS: Readonly<Record<string, Printer>> = {
  bindingRole: b => `${String(b.roleRef?.kind ?? '')}/${String(b.roleRef?.name ?? '')}`,
  bindingUsers: subjects('User'),
  bindingGroups: subjects('Group'),
  bindingServiceAccounts: subjects('ServiceAccount'),
  podTemplateContainers: t => ((t.template?.spec?.containers ?? []) as Obj[]).map(c => c.name).join(','),
  podTemplateImages: t => ((t.template?.spec?.containers ?? []) as Obj[]).map(c => c.image).join(','),
  podTemplateLabels: t => formatLabels(t.template?.metadata?.labels),
  quotaRequest: quotaColumn(false),
  quotaLimit: quotaColumn(true),
  revisionController,
  slicePorts: s => firstThree(((s.ports ?? []) as Obj[]).map(p => (p.port === undefined || p.port === null ? '<unset>' : String(p.port)))),
  sliceEndpoints: s => firstThree(((s.endpoints ?? []) as Obj[]).flatMap(e => (e.addresses ?? []) as string[])),
  pdbMinAvailable: p => intOrString(p.spec?.minAvailable),
  pdbMaxUnavailable: p => intOrString(p.spec?.maxUnavailable),
  csrSignerName: c => (typeof c.spec?.signerName === 'string' && c.spec.signerName !== '' ? c.spec.signerName : '<none>'),
  csrRequestedDuration: c => (typeof c.spec?.expirationSeconds === 'number' ? humanDuration(c.spec.expirationSeconds * 1000) : '<none>'),
  csrCondition,
  priorityClassGlobalDefault: p => p.globalDefault === true,
  priorityClassPreemption: p => String(p.preemptionPolicy ?? '')
}
