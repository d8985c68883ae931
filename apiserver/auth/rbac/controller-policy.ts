// The system:controller:* ClusterRoles of the controllers orch runs (bootstrappolicy/controller_policy.go), bound to their service accounts.

import { EVENTS, READ, bindingOf, rule, serviceAccount, type BootstrapClusterRole, type BootstrapClusterRoleBinding } from './policy-data.js'

const PREFIX = 'system:controller:'

/** Controller name (its service account) -> rules. */
const CONTROLLER_RULES: Record<string, ReturnType<typeof rule>[]> = {
  'clusterrole-aggregation-controller': [rule('escalate,get,list,patch,update,watch', 'rbac.authorization.k8s.io', 'clusterroles')],
  'cronjob-controller': [
    rule('get,list,update,watch', 'batch', 'cronjobs'),
    rule('create,delete,get,list,patch,update,watch', 'batch', 'jobs'),
    rule('update', 'batch', 'cronjobs/status'),
    rule('update', 'batch', 'cronjobs/finalizers'),
    rule('delete,list,watch', '', 'pods'),
    EVENTS
  ],
  'daemon-set-controller': [
    rule(READ, 'apps,extensions', 'daemonsets'),
    rule('update', 'apps,extensions', 'daemonsets/status'),
    rule('update', 'apps,extensions', 'daemonsets/finalizers'),
    rule('list,watch', '', 'nodes'),
    rule('create,delete,list,patch,watch', '', 'pods'),
    rule('create', '', 'pods/binding'),
    rule('create,delete,get,list,patch,update,watch', 'apps', 'controllerrevisions'),
    EVENTS
  ],
  'deployment-controller': [
    rule('get,list,update,watch', 'apps,extensions', 'deployments'),
    rule('update', 'apps,extensions', 'deployments/status'),
    rule('update', 'apps,extensions', 'deployments/finalizers'),
    rule('create,delete,get,list,patch,update,watch', 'apps,extensions', 'replicasets'),
    rule('get,list,update,watch', '', 'pods'),
    EVENTS
  ],
  'disruption-controller': [
    rule(READ, 'apps,extensions', 'deployments'),
    rule(READ, 'apps,extensions', 'replicasets'),
    rule(READ, '', 'replicationcontrollers'),
    rule(READ, 'policy', 'poddisruptionbudgets'),
    rule(READ, 'apps', 'statefulsets'),
    rule('update', 'policy', 'poddisruptionbudgets/status'),
    rule('patch,update', '', 'pods/status'),
    rule('get', '*', '*/scale'),
    EVENTS
  ],
  'endpoint-controller': [
    rule(READ, '', 'pods,services'),
    rule('create,delete,get,list,update,watch', '', 'endpoints'),
    rule('create', '', 'endpoints/restricted'),
    EVENTS
  ],
  'endpointslice-controller': [
    rule(READ, '', 'nodes,pods,services'),
    rule('update', '', 'services/finalizers'),
    rule('create,delete,get,list,update,watch', 'discovery.k8s.io', 'endpointslices'),
    EVENTS
  ],
  'generic-garbage-collector': [rule('delete,get,list,patch,update,watch', '*', '*'), EVENTS],
  'horizontal-pod-autoscaler': [
    rule('get,list,watch', 'autoscaling', 'horizontalpodautoscalers'),
    rule('update', 'autoscaling', 'horizontalpodautoscalers/status'),
    rule('get,update', '*', '*/scale'),
    rule('list', '', 'pods'),
    rule('list', 'metrics.k8s.io', 'pods'),
    rule('get,list', 'custom.metrics.k8s.io', '*'),
    rule('get,list', 'external.metrics.k8s.io', '*'),
    EVENTS
  ],
  'job-controller': [
    rule('get,list,patch,update,watch', 'batch', 'jobs'),
    rule('update', 'batch', 'jobs/status'),
    rule('update', 'batch', 'jobs/finalizers'),
    rule('create,delete,list,patch,watch', '', 'pods'),
    EVENTS
  ],
  'namespace-controller': [
    rule('delete,get,list,watch', '', 'namespaces'),
    rule('update', '', 'namespaces/finalize,namespaces/status'),
    rule('delete,deletecollection,get,list,watch', '*', '*')
  ],
  'node-controller': [
    rule('delete,get,list,patch,update,watch', '', 'nodes'),
    rule('patch,update', '', 'nodes/status'),
    rule('patch,update', '', 'pods/status'),
    rule('delete,get,list,watch', '', 'pods'),
    EVENTS
  ],
  'pod-garbage-collector': [rule('delete,list,watch', '', 'pods'), rule(READ, '', 'nodes'), rule('patch', '', 'pods/status')],
  'replicaset-controller': [
    rule('get,list,update,watch', 'apps,extensions', 'replicasets'),
    rule('update', 'apps,extensions', 'replicasets/status'),
    rule('update', 'apps,extensions', 'replicasets/finalizers'),
    rule('create,delete,list,patch,watch', '', 'pods'),
    EVENTS
  ],
  'replication-controller': [
    rule('get,list,update,watch', '', 'replicationcontrollers'),
    rule('update', '', 'replicationcontrollers/status'),
    rule('update', '', 'replicationcontrollers/finalizers'),
    rule('create,delete,list,patch,watch', '', 'pods'),
    EVENTS
  ],
  'resourcequota-controller': [rule('list,watch', '*', '*'), rule('update', '', 'resourcequotas/status'), EVENTS],
  'root-ca-cert-publisher': [rule('create,update', '', 'configmaps'), EVENTS],
  'service-account-controller': [rule('create', '', 'serviceaccounts'), EVENTS],
  'statefulset-controller': [
    rule('list,watch', '', 'pods'),
    rule(READ, 'apps', 'statefulsets'),
    rule('update', 'apps', 'statefulsets/status'),
    rule('update', 'apps', 'statefulsets/finalizers'),
    rule('create,delete,get,patch,update', '', 'pods'),
    rule('create,delete,get,list,patch,update,watch', 'apps', 'controllerrevisions'),
    rule('create,get,list,watch', '', 'persistentvolumeclaims'),
    rule('delete,update', '', 'persistentvolumeclaims'),
    rule('update', '', 'pods/finalizers'),
    EVENTS
  ],
  'ttl-after-finished-controller': [rule('delete,get,list,watch', 'batch', 'jobs'), EVENTS]
}

export function controllerRoles (): BootstrapClusterRole[] {
  return Object.entries(CONTROLLER_RULES).map(([name, rules]) => ({ name: PREFIX + name, rules: structuredClone(rules) }))
}

/** Each controller role bound to the controller's service account in `namespace` (kube-system in Kubernetes). */
export function controllerBindings (namespace: string): BootstrapClusterRoleBinding[] {
  return Object.keys(CONTROLLER_RULES).map(name => bindingOf(PREFIX + name, serviceAccount(namespace, name)))
}
