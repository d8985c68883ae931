// Mirror pods: the API server's copies of an orchlet's static pods, known by their annotation (orch's or Kubernetes' name).

/** The orchlet writes `orch.io/config.mirror`; a kubelet-style `kubernetes.io/config.mirror` counts too. */
export const MIRROR_ANNOTATIONS = ['orch.io/config.mirror', 'kubernetes.io/config.mirror'] as const

export function isMirrorPod (pod: { metadata?: unknown }): boolean {
  const annotations = ((pod.metadata as { annotations?: Record<string, unknown> } | undefined)?.annotations) ?? {}
  return MIRROR_ANNOTATIONS.some(k => annotations[k] !== undefined)
}
