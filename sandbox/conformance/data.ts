// Reads the public conformance data carried in the repository (test/conformance-data) and adapts Kubernetes schema markers.

import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The conformance data folder inside the repository. */
export function conformanceDir(): string {
  return fileURLToPath(new URL('../../test/conformance-data/', import.meta.url))
}

export function readConformanceJson<T>(relative: string): T {
  return JSON.parse(readFileSync(resolve(conformanceDir(), relative), 'utf8')) as T
}

/** Kubernetes' x-kubernetes-* schema markers are orch's x-orch-* markers. */
export function toOrchSchema(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(toOrchSchema)
  if (!s || typeof s !== 'object') return s
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(s)) out[k.replace(/^x-kubernetes-/, 'x-orch-')] = toOrchSchema(v)
  return out
}
