// The bootstrap ClusterRoles and ClusterRoleBindings (Kubernetes v1.29 bootstrappolicy/policy.go), as data.

import { controllerBindings, controllerRoles } from './controller-policy.js'
import {
  EVENTS, READ, READ_WRITE, WRITE, bindingOf, group, rule, urls, user, serviceAccount,
  type BootstrapClusterRole, type BootstrapClusterRoleBinding
} from './policy-data.js'
import type { PolicyRule } from './rules.js'

const AGGREGATE_TO = (role: string): Record<string, string> => ({ [`rbac.authorization.k8s.io/aggregate-to-${role}`]: 'true' })

const aggregated: BootstrapClusterRole[] = [
  { name: 'admin', rules: [], aggregateFrom: [AGGREGATE_TO('admin')] },
  { name: 'edit', rules: [], labels: AGGREGATE_TO('admin'), aggregateFrom: [AGGREGATE_TO('edit')] },
  { name: 'view', rules: [], labels: AGGREGATE_TO('edit'), aggregateFrom: [AGGREGATE_TO('view')] },
  {
    name: 'system:aggregate-to-admin', labels: AGGREGATE_TO('admin'),
    rules: [rule('create', 'authorization.k8s.io', 'localsubjectaccessreviews'),
      rule(READ_WRITE, 'rbac.authorization.k8s.io', 'rolebindings,roles')]
  },
  {
    name: 'system:aggregate-to-edit', labels: AGGREGATE_TO('edit'),
    rules: [
      rule(READ, '', 'pods/attach,pods/exec,pods/portforward,pods/proxy,secrets,services/proxy'),
      rule('impersonate', '', 'serviceaccounts'),
      rule(WRITE, '', 'pods,pods/attach,pods/exec,pods/portforward,pods/proxy'),
      rule('create', '', 'pods/eviction'),
      rule(WRITE, '', 'configmaps,events,persistentvolumeclaims,replicationcontrollers,replicationcontrollers/scale,secrets,serviceaccounts,services,services/proxy'),
      rule('create', '', 'serviceaccounts/token'),
      rule(WRITE, 'apps', 'daemonsets,deployments,deployments/rollback,deployments/scale,replicasets,replicasets/scale,statefulsets,statefulsets/scale'),
      rule(WRITE, 'autoscaling', 'horizontalpodautoscalers'),
      rule(WRITE, 'batch', 'cronjobs,jobs'),
      rule(WRITE, 'extensions', 'daemonsets,deployments,deployments/rollback,deployments/scale,ingresses,networkpolicies,replicasets,replicasets/scale,replicationcontrollers/scale'),
      rule(WRITE, 'policy', 'poddisruptionbudgets'),
      rule(WRITE, 'networking.k8s.io', 'ingresses,networkpolicies'),
      rule(READ_WRITE, 'coordination.k8s.io', 'leases')
    ]
  },
  {
    name: 'system:aggregate-to-view', labels: AGGREGATE_TO('view'),
    rules: [
      rule(READ, '', 'configmaps,endpoints,persistentvolumeclaims,persistentvolumeclaims/status,pods,replicationcontrollers,replicationcontrollers/scale,serviceaccounts,services,services/status'),
      rule(READ, '', 'bindings,events,limitranges,namespaces/status,pods/log,pods/status,replicationcontrollers/status,resourcequotas,resourcequotas/status'),
      rule(READ, '', 'namespaces'),
      rule(READ, 'discovery.k8s.io', 'endpointslices'),
      rule(READ, 'apps', 'controllerrevisions,daemonsets,daemonsets/status,deployments,deployments/scale,deployments/status,replicasets,replicasets/scale,replicasets/status,statefulsets,statefulsets/scale,statefulsets/status'),
      rule(READ, 'autoscaling', 'horizontalpodautoscalers,horizontalpodautoscalers/status'),
      rule(READ, 'batch', 'cronjobs,cronjobs/status,jobs,jobs/status'),
      rule(READ, 'extensions', 'daemonsets,daemonsets/status,deployments,deployments/scale,deployments/status,ingresses,ingresses/status,networkpolicies,replicasets,replicasets/scale,replicasets/status,replicationcontrollers/scale'),
      rule(READ, 'policy', 'poddisruptionbudgets,poddisruptionbudgets/status'),
      rule(READ, 'networking.k8s.io', 'ingresses,ingresses/status,networkpolicies')
    ]
  },
  // As metrics-server's aggregated reader: whoever may view may read the built-in resource metrics (kubectl top).
  { name: 'system:aggregated-metrics-reader', labels: AGGREGATE_TO('view'), rules: [rule(READ, 'metrics.k8s.io', 'nodes,pods')] }
]

const components: BootstrapClusterRole[] = [
  {
    name: 'system:kube-scheduler',
    rules: [
      EVENTS,
      rule('create', 'coordination.k8s.io', 'leases'),
      rule('get,update', 'coordination.k8s.io', 'leases', 'kube-scheduler'),
      rule(READ, '', 'nodes'),
      rule('delete,get,list,watch', '', 'pods'),
      rule('create', '', 'bindings,pods/binding'),
      rule('patch,update', '', 'pods/status'),
      rule(READ, '', 'replicationcontrollers,services'),
      rule(READ, 'apps,extensions', 'replicasets'),
      rule(READ, 'apps', 'statefulsets'),
      rule(READ, 'policy', 'poddisruptionbudgets'),
      rule(READ, '', 'persistentvolumeclaims,persistentvolumes'),
      rule('create', 'authentication.k8s.io', 'tokenreviews'),
      rule('create', 'authorization.k8s.io', 'subjectaccessreviews'),
      rule(READ, 'storage.k8s.io', 'csinodes'),
      rule(READ, '', 'namespaces'),
      rule(READ, 'storage.k8s.io', 'csidrivers'),
      rule(READ, 'storage.k8s.io', 'csistoragecapacities')
    ]
  },
  {
    name: 'system:kube-controller-manager',
    rules: [
      EVENTS,
      rule('create', 'coordination.k8s.io', 'leases'),
      rule('get,update', 'coordination.k8s.io', 'leases', 'kube-controller-manager'),
      rule('create', '', 'secrets,serviceaccounts'),
      rule('delete', '', 'secrets'),
      rule('get', '', 'configmaps,namespaces,secrets,serviceaccounts'),
      rule('update', '', 'secrets,serviceaccounts'),
      rule('create', 'authentication.k8s.io', 'tokenreviews'),
      rule('create', 'authorization.k8s.io', 'subjectaccessreviews'),
      rule('list,watch', '*', '*'),
      rule('create', '', 'serviceaccounts/token')
    ]
  },
  {
    name: 'system:node',
    rules: [
      rule('create', 'authentication.k8s.io', 'tokenreviews'),
      rule('create', 'authorization.k8s.io', 'localsubjectaccessreviews,subjectaccessreviews'),
      rule(READ, '', 'services'),
      rule('create,get,list,watch', '', 'nodes'),
      rule('patch,update', '', 'nodes/status'),
      rule('patch,update', '', 'nodes'),
      rule('create,patch,update', '', 'events'),
      rule(READ, '', 'pods'),
      rule('create,delete', '', 'pods'),
      rule('patch,update', '', 'pods/status'),
      rule('create', '', 'pods/eviction'),
      rule(READ, '', 'configmaps,secrets'),
      rule('get', '', 'persistentvolumeclaims,persistentvolumes'),
      rule('get', '', 'endpoints'),
      rule('create,get,list,watch', 'certificates.k8s.io', 'certificatesigningrequests'),
      rule('create,delete,get,patch,update', 'coordination.k8s.io', 'leases'),
      rule('get', 'storage.k8s.io', 'volumeattachments'),
      rule('create', '', 'serviceaccounts/token'),
      rule('get,patch,update', '', 'persistentvolumeclaims/status'),
      rule(READ, 'storage.k8s.io', 'csidrivers'),
      rule('create,delete,get,patch,update', 'storage.k8s.io', 'csinodes'),
      rule(READ, 'node.k8s.io', 'runtimeclasses')
    ]
  },
  {
    name: 'system:node-proxier',
    rules: [rule('list,watch', '', 'endpoints,services'), rule(READ, '', 'nodes'), EVENTS, rule('list,watch', 'discovery.k8s.io', 'endpointslices')]
  },
  { name: 'system:node-bootstrapper', rules: [rule('create,get,list,watch', 'certificates.k8s.io', 'certificatesigningrequests')] },
  { name: 'system:kube-dns', rules: [rule('list,watch', '', 'endpoints,services')] },
  {
    name: 'system:volume-scheduler',
    rules: [rule('get,list,patch,update,watch', '', 'persistentvolumes'), rule(READ, 'storage.k8s.io', 'storageclasses'),
      rule('get,list,patch,update,watch', '', 'persistentvolumeclaims')]
  }
]

const general: BootstrapClusterRole[] = [
  { name: 'cluster-admin', rules: [rule('*', '*', '*'), urls('*', '*')] },
  {
    name: 'system:discovery',
    rules: [urls('get', '/api,/api/*,/apis,/apis/*,/healthz,/livez,/openapi,/openapi/*,/readyz,/version,/version/')]
  },
  {
    name: 'system:basic-user',
    rules: [rule('create', 'authorization.k8s.io', 'selfsubjectaccessreviews,selfsubjectrulesreviews'),
      rule('create', 'authentication.k8s.io', 'selfsubjectreviews')]
  },
  { name: 'system:public-info-viewer', rules: [urls('get', '/healthz,/livez,/readyz,/version,/version/')] },
  { name: 'system:monitoring', rules: [urls('get', '/healthz,/healthz/*,/livez,/livez/*,/metrics,/metrics/slis,/readyz,/readyz/*')] },
  {
    name: 'system:auth-delegator',
    rules: [rule('create', 'authentication.k8s.io', 'tokenreviews'), rule('create', 'authorization.k8s.io', 'subjectaccessreviews')]
  },
  { name: 'system:service-account-issuer-discovery', rules: [urls('get', '/.well-known/openid-configuration,/openid/v1/jwks')] },
  {
    name: 'system:certificates.k8s.io:certificatesigningrequests:nodeclient',
    rules: [rule('create', 'certificates.k8s.io', 'certificatesigningrequests/nodeclient')]
  },
  {
    name: 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient',
    rules: [rule('create', 'certificates.k8s.io', 'certificatesigningrequests/selfnodeclient')]
  }
]

/** Every bootstrap ClusterRole; controller roles name service accounts in `systemNamespace`'s bindings only. */
export function bootstrapClusterRoles (): BootstrapClusterRole[] {
  return structuredClone([...general, ...aggregated, ...components, ...controllerRoles()])
}

/**
 * The bootstrap ClusterRoleBindings. `system:node` has no subjects (nodes are authorized by the Node authorizer);
 * the node-bootstrapper and node-client bindings are the ones kubeadm adds for TLS bootstrapping.
 */
export function bootstrapClusterRoleBindings (systemNamespace = 'kube-system'): BootstrapClusterRoleBinding[] {
  return [
    bindingOf('cluster-admin', group('system:masters')),
    bindingOf('system:discovery', group('system:authenticated')),
    bindingOf('system:basic-user', group('system:authenticated')),
    bindingOf('system:public-info-viewer', group('system:authenticated'), group('system:unauthenticated')),
    bindingOf('system:monitoring', group('system:monitoring')),
    bindingOf('system:service-account-issuer-discovery', group('system:serviceaccounts')),
    bindingOf('system:kube-scheduler', user('system:kube-scheduler')),
    bindingOf('system:volume-scheduler', user('system:kube-scheduler')),
    bindingOf('system:kube-controller-manager', user('system:kube-controller-manager')),
    bindingOf('system:kube-dns', serviceAccount(systemNamespace, 'kube-dns')),
    bindingOf('system:node'),
    bindingOf('system:node-proxier', user('system:kube-proxy')),
    bindingOf('system:node-bootstrapper', group('system:bootstrappers')),
    bindingOf('system:certificates.k8s.io:certificatesigningrequests:nodeclient', group('system:bootstrappers')),
    bindingOf('system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', group('system:nodes')),
    ...controllerBindings(systemNamespace)
  ]
}

/** The rules of system:node: what the Node authorizer grants every node beyond its graph (NodeRules). */
export function nodeRules (): PolicyRule[] {
  return structuredClone(components.find(r => r.name === 'system:node')!.rules)
}
