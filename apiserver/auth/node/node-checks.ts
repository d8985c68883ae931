// The Node authorizer's per-resource rules (verbs, subresources, names), with Kubernetes' reason texts; relations come from outside.

import type { Attributes, AuthorizationResult } from '../types.js'
import type { RefKind } from './pod-graph.js'
import { NODE_LEASE_NAMESPACES } from './node-identity.js'

/** What the checks ask about a node's pods. */
export interface NodeRelations {
  /** A pod bound to `node` references the object. */
  references(node: string, kind: RefKind, namespace: string, name: string): Promise<boolean>
  /** A claim used by a pod bound to `node` is bound to the volume. */
  usesVolume(node: string, volume: string): Promise<boolean>
}

export const noOpinion = (reason: string): AuthorizationResult => ({ decision: 'noOpinion', reason })
export const ALLOW: AuthorizationResult = { decision: 'allow', reason: '' }
const noRelationship = (node: string): AuthorizationResult => noOpinion(`no relationship found between node '${node}' and this object`)

async function related (rel: NodeRelations, node: string, kind: RefKind, a: Attributes): Promise<AuthorizationResult> {
  if (a.name === '') return noOpinion('No Object name found')
  return await rel.references(node, kind, a.namespace, a.name) ? ALLOW : noRelationship(node)
}

/** Secrets and configmaps: read one by name. */
export async function readNamespaced (rel: NodeRelations, node: string, kind: RefKind, a: Attributes): Promise<AuthorizationResult> {
  if (!['get', 'list', 'watch'].includes(a.verb)) return noOpinion('can only read resources of this type')
  if (a.subresource !== '') return noOpinion('cannot read subresource')
  if (a.namespace === '') return noOpinion('can only read namespaced object of this type')
  return await related(rel, node, kind, a)
}

/** PersistentVolumeClaims: get, and get/update/patch of their status. */
export async function claim (rel: NodeRelations, node: string, a: Attributes): Promise<AuthorizationResult> {
  if (a.subresource === 'status') {
    if (!['get', 'update', 'patch'].includes(a.verb)) return noOpinion('can only get, update or patch this type')
  } else {
    if (a.verb !== 'get') return noOpinion('can only get individual resources of this type')
    if (a.subresource !== '') return noOpinion('cannot get subresource')
  }
  return await related(rel, node, 'persistentvolumeclaim', a)
}

/** PersistentVolumes: get one its pods' claims are bound to. */
export async function volume (rel: NodeRelations, node: string, a: Attributes): Promise<AuthorizationResult> {
  if (a.verb !== 'get') return noOpinion('can only get individual resources of this type')
  if (a.subresource !== '') return noOpinion('cannot get subresource')
  if (a.name === '') return noOpinion('No Object name found')
  return await rel.usesVolume(node, a.name) ? ALLOW : noRelationship(node)
}

/** ServiceAccounts: only tokens, for the accounts its pods run as. */
export async function token (rel: NodeRelations, node: string, a: Attributes): Promise<AuthorizationResult> {
  if (a.verb !== 'create' || a.name === '') return noOpinion('can only create tokens for individual service accounts')
  if (a.subresource !== 'token') return noOpinion('can only create token subresource of serviceaccount')
  return await related(rel, node, 'serviceaccount', a)
}

/** Leases: its own, in the node-lease namespaces. */
export function lease (node: string, a: Attributes): AuthorizationResult {
  if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb)) return noOpinion('can only get, create, update, patch, or delete a node lease')
  if (!NODE_LEASE_NAMESPACES.includes(a.namespace)) {
    return noOpinion(`can only access leases in the ${NODE_LEASE_NAMESPACES.map(n => JSON.stringify(n)).join(' or ')} namespace`)
  }
  if (a.verb !== 'create' && a.name !== node) return noOpinion('can only access node lease with the same name as the requesting node')
  return ALLOW
}
