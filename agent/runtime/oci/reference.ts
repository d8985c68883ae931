// Image references: parse and normalise `[registry/]name[:tag][@sha256:...]` the way Docker and containerd do.
import { OciError } from './errors.js'
import { isDigest } from './digest.js'

export const DEFAULT_REGISTRY = 'docker.io'

export interface ImageReference {
  /** Host[:port] as written, with docker.io as the default. */
  registry: string
  /** Repository path, `library/` added for single-component Docker Hub names. */
  repository: string
  tag?: string
  digest?: string
}

const COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/
const TAG = /^[\w][\w.-]{0,127}$/
const HOST = /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:]+\])(?::[0-9]+)?$/

/** Parse an image reference; a reference without tag or digest gets the tag `latest`. */
export function parseReference (ref: string): ImageReference {
  const bad = (why: string): OciError => new OciError('OCI_ERR_BAD_REFERENCE', `invalid image reference ${JSON.stringify(ref)}: ${why}`)
  if (ref === '' || ref.length > 1024) throw bad('empty or too long')
  let rest = ref
  let digest: string | undefined
  const at = rest.indexOf('@')
  if (at >= 0) {
    digest = rest.slice(at + 1)
    rest = rest.slice(0, at)
    if (!isDigest(digest)) throw bad('digest must be sha256:<64 hex>')
  }
  let tag: string | undefined
  const lastSlash = rest.lastIndexOf('/')
  const colon = rest.lastIndexOf(':')
  if (colon > lastSlash) {
    tag = rest.slice(colon + 1)
    rest = rest.slice(0, colon)
    if (!TAG.test(tag)) throw bad('bad tag')
  }
  const parts = rest.split('/')
  let registry = DEFAULT_REGISTRY
  if (parts.length > 1 && (parts[0].includes('.') || parts[0].includes(':') || parts[0] === 'localhost' || parts[0].startsWith('['))) {
    registry = parts.shift() as string
    if (!HOST.test(registry)) throw bad('bad registry host')
  }
  if (registry === 'index.docker.io') registry = DEFAULT_REGISTRY
  if (registry === DEFAULT_REGISTRY && parts.length === 1) parts.unshift('library')
  for (const p of parts) if (!COMPONENT.test(p)) throw bad(`bad path component ${JSON.stringify(p)}`)
  if (tag === undefined && digest === undefined) tag = 'latest'
  return { registry, repository: parts.join('/'), tag, digest }
}

/** `registry/repository` */
export function repositoryName (r: ImageReference): string {
  return `${r.registry}/${r.repository}`
}

/** The normalised string: `registry/repo:tag`, `registry/repo@digest` or `registry/repo:tag@digest`. */
export function formatReference (r: ImageReference): string {
  return repositoryName(r) + (r.tag !== undefined ? `:${r.tag}` : '') + (r.digest !== undefined ? `@${r.digest}` : '')
}

export function normalizeReference (ref: string): string {
  return formatReference(parseReference(ref))
}
