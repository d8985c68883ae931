// A pull-only client of the Docker Registry HTTP API v2 / OCI distribution spec over undici: manifests with
// content negotiation, blobs (redirects followed), anonymous or basic Bearer-token auth from WWW-Authenticate.
import { fetch } from '../../../apiserver/client/undici-core.js'
import type { Dispatcher } from 'undici'
import { OciError } from './errors.js'
import { MANIFEST_ACCEPT } from './manifest.js'
import type { Descriptor } from './manifest.js'
import type { ImageReference } from './reference.js'
import type { BlobSource } from './image-fetch.js'

export interface RegistryCredentials { username?: string; password?: string; /** base64 `user:pass` */ auth?: string; /** a bearer token used as is */ registryToken?: string }

export interface RegistryClientOptions {
  dispatcher?: Dispatcher
  /** Registries (host[:port]) reached over plain HTTP. Loopback hosts always are, as Docker does. */
  insecureRegistries?: string[]
  maxManifestBytes?: number
  maxBlobBytes?: number
}

const DOCKER_HUB_API = 'registry-1.docker.io'

function isLoopback (host: string): boolean {
  const name = host.replace(/:\d+$/, '').replace(/^\[|\]$/g, '')
  return name === 'localhost' || name === '::1' || /^127\./.test(name)
}

/** Parse `Bearer realm="...",service="...",scope="..."` into its scheme and parameters. */
export function parseChallenge (header: string): { scheme: string; params: Record<string, string> } {
  const m = /^\s*(\w+)\s*(.*)$/.exec(header)
  const params: Record<string, string> = {}
  if (!m) return { scheme: '', params }
  for (const p of m[2].matchAll(/(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))/g)) params[p[1].toLowerCase()] = (p[2] ?? p[3] ?? '').replace(/\\(.)/g, '$1')
  return { scheme: m[1].toLowerCase(), params }
}

async function readLimited (res: Awaited<ReturnType<typeof fetch>>, limit: number, what: string): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length') ?? NaN)
  if (declared > limit) throw new OciError('OCI_ERR_TOO_LARGE', `${what} is ${declared} bytes, above the limit of ${limit}`)
  const chunks: Buffer[] = []
  let total = 0
  if (res.body) {
    for await (const chunk of res.body) {
      total += chunk.length
      if (total > limit) throw new OciError('OCI_ERR_TOO_LARGE', `${what} exceeds the limit of ${limit} bytes`)
      chunks.push(Buffer.from(chunk))
    }
  }
  return Buffer.concat(chunks)
}

/** A BlobSource reading `ref`'s repository from its registry. Tokens are kept for this source's lifetime. */
export function registrySource (ref: ImageReference, credentials: RegistryCredentials = {}, opts: RegistryClientOptions = {}): BlobSource {
  const host = ref.registry === 'docker.io' ? DOCKER_HUB_API : ref.registry
  const scheme = isLoopback(ref.registry) || (opts.insecureRegistries ?? []).includes(ref.registry) ? 'http' : 'https'
  const base = `${scheme}://${host}/v2/${ref.repository}`
  const basic = credentials.auth ?? (credentials.username !== undefined ? Buffer.from(`${credentials.username}:${credentials.password ?? ''}`).toString('base64') : undefined)
  let authorization = credentials.registryToken !== undefined ? `Bearer ${credentials.registryToken}` : undefined

  const fail = (code: 'OCI_ERR_REGISTRY' | 'OCI_ERR_AUTH' | 'OCI_ERR_NOT_FOUND', message: string, cause?: unknown): OciError =>
    new OciError(code, `${ref.registry}/${ref.repository}: ${message}`, { cause })

  const send = async (url: string, accept?: string, auth?: string): Promise<Awaited<ReturnType<typeof fetch>>> => {
    const headers: Record<string, string> = {}
    if (accept) headers.accept = accept
    if (auth) headers.authorization = auth
    try {
      return await fetch(url, { headers, redirect: 'follow', dispatcher: opts.dispatcher })
    } catch (err) {
      throw fail('OCI_ERR_REGISTRY', `cannot reach ${url}: ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}`, err)
    }
  }

  const fetchToken = async (params: Record<string, string>): Promise<string> => {
    if (!params.realm) throw fail('OCI_ERR_AUTH', 'Bearer challenge without a realm')
    const url = new URL(params.realm)
    if (params.service) url.searchParams.set('service', params.service)
    url.searchParams.set('scope', params.scope ?? `repository:${ref.repository}:pull`)
    const res = await send(url.toString(), 'application/json', basic !== undefined ? `Basic ${basic}` : undefined)
    const body = await readLimited(res, 1 << 20, 'token response')
    if (!res.ok) throw fail('OCI_ERR_AUTH', `token endpoint answered ${res.status}`)
    let token: unknown
    try { const doc = JSON.parse(body.toString('utf8')); token = doc.token ?? doc.access_token } catch { token = undefined }
    if (typeof token !== 'string' || token === '') throw fail('OCI_ERR_AUTH', 'token endpoint returned no token')
    return token
  }

  /** GET with auth: on 401 answer the challenge once and retry. */
  const get = async (url: string, accept?: string): Promise<Awaited<ReturnType<typeof fetch>>> => {
    let res = await send(url, accept, authorization)
    if (res.status !== 401) return res
    await res.body?.cancel()
    const challenge = parseChallenge(res.headers.get('www-authenticate') ?? '')
    if (challenge.scheme === 'bearer') authorization = `Bearer ${await fetchToken(challenge.params)}`
    else if (challenge.scheme === 'basic' && basic !== undefined) authorization = `Basic ${basic}`
    else throw fail('OCI_ERR_AUTH', 'registry requires authentication we cannot give')
    res = await send(url, accept, authorization)
    if (res.status === 401 || res.status === 403) throw fail('OCI_ERR_AUTH', `registry refused our credentials (${res.status})`)
    return res
  }

  const check = async (res: Awaited<ReturnType<typeof fetch>>, what: string): Promise<void> => {
    if (res.ok) return
    const text = (await readLimited(res, 64 << 10, 'error body').catch(() => Buffer.alloc(0))).toString('utf8').slice(0, 300)
    if (res.status === 404) throw fail('OCI_ERR_NOT_FOUND', `${what} not found`)
    throw fail(res.status === 401 || res.status === 403 ? 'OCI_ERR_AUTH' : 'OCI_ERR_REGISTRY', `${what}: HTTP ${res.status} ${text}`)
  }

  return {
    manifest: async reference => {
      const res = await get(`${base}/manifests/${encodeURIComponent(reference).replace(/%3A/g, ':')}`, MANIFEST_ACCEPT)
      await check(res, `manifest ${reference}`)
      const bytes = await readLimited(res, opts.maxManifestBytes ?? 4 << 20, `manifest ${reference}`)
      return { bytes, mediaType: res.headers.get('content-type') ?? undefined, digest: res.headers.get('docker-content-digest') ?? undefined }
    },
    blob: async (d: Descriptor) => {
      const limit = opts.maxBlobBytes ?? 512 << 20
      if (d.size > limit) throw new OciError('OCI_ERR_TOO_LARGE', `blob ${d.digest} is ${d.size} bytes, above the limit of ${limit}`)
      const res = await get(`${base}/blobs/${d.digest}`)
      await check(res, `blob ${d.digest}`)
      return await readLimited(res, Math.min(limit, d.size), `blob ${d.digest}`)
    }
  }
}
