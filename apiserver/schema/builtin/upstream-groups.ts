// The Kubernetes names of orch's own API groups: `coordination.orch.io` is served as `coordination.k8s.io` too.

const ORCH = '.orch.io'

/** The upstream name of a `*.orch.io` group (`apiextensions.orch.io` -> `apiextensions.k8s.io`); undefined for others. */
export function upstreamGroup (group: string): string | undefined {
  return group.endsWith(ORCH) ? `${group.slice(0, -ORCH.length)}.k8s.io` : undefined
}
