// Who is a node: user `system:node:<name>` in group `system:nodes` (Kubernetes' NodeIdentifier).

import type { UserInfo } from '../types.js'

export const NODES_GROUP = 'system:nodes'
const NODE_USER_PREFIX = 'system:node:'

/** The node's name ('' when the user is in system:nodes without a node name), or undefined for other users. */
export function nodeName (user: UserInfo): string | undefined {
  if (!user.groups.includes(NODES_GROUP) || !user.username.startsWith(NODE_USER_PREFIX)) return undefined
  return user.username.slice(NODE_USER_PREFIX.length)
}

/** Namespaces of node leases (orch's and the Kubernetes name it is served under too). */
export const NODE_LEASE_NAMESPACES = ['orch-node-lease', 'kube-node-lease']
