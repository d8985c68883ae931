// Locates the shared conformance data (../shared beside the checkout) and adapts Kubernetes schema markers.

import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The shared conformance folder: ../shared/conformance relative to the repository root. */
export function conformanceDir(): string {
  const candidates = [
    fileURLToPath(new URL('../../../shared/conformance', import.meta.url)),
    resolve(process.cwd(), '../shared/conformance'),
  ]
  for (const c of candidates) if (existsSync(c)) return c
  throw new Error(`conformance data not found (looked in ${candidates.join(', ')})`)
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
