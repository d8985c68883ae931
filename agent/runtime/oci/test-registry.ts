// A tiny real OCI registry for tests: serves image layouts over HTTP on 127.0.0.1 with the Bearer token dance
// (401 + WWW-Authenticate -> GET /token -> Bearer), blobs through a redirect, and a switch to corrupt a blob.
import { createServer } from 'node:http'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { randomBytes } from 'node:crypto'
import type { BuiltLayout } from './layout-writer.js'

export interface TestRegistry {
  /** host:port */
  host: string
  /** Serve `layout` as repository `name`, its index entry tagged `tag`. */
  addRepository: (name: string, tag: string, layout: BuiltLayout) => void
  /** Serve these bytes instead of the real blob `digest`. */
  corruptBlob: (digest: string, bytes: Buffer) => void
  /** Requests seen, as `METHOD path` (for asserting the token dance happened). */
  requests: string[]
  close: () => Promise<void>
}

interface Repo { tags: Map<string, string>; blobs: Map<string, Buffer>; mediaTypes: Map<string, string> }

export async function startTestRegistry (opts: { requireToken?: boolean } = {}): Promise<TestRegistry> {
  const repos = new Map<string, Repo>()
  const corrupt = new Map<string, Buffer>()
  const requests: string[] = []
  const token = randomBytes(16).toString('hex')
  let host = ''

  const send = (res: ServerResponse, status: number, body: Buffer | string, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { 'content-length': String(Buffer.byteLength(body)), ...headers })
    res.end(body)
  }
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', `http://${host}`)
    requests.push(`${req.method} ${url.pathname}`)
    if (url.pathname === '/token') {
      if (!url.searchParams.get('scope')?.startsWith('repository:')) return send(res, 400, 'scope required')
      return send(res, 200, JSON.stringify({ token }), { 'content-type': 'application/json' })
    }
    const raw = /^\/raw\/(.+)\/(sha256:[a-f0-9]{64})$/.exec(url.pathname)
    if (raw) {
      const blob = corrupt.get(raw[2]) ?? repos.get(raw[1])?.blobs.get(raw[2])
      return blob ? send(res, 200, blob, { 'content-type': 'application/octet-stream' }) : send(res, 404, 'no blob')
    }
    if (!url.pathname.startsWith('/v2/')) return send(res, 404, 'not found')
    if (opts.requireToken !== false && req.headers.authorization !== `Bearer ${token}`) {
      return send(res, 401, JSON.stringify({ errors: [{ code: 'UNAUTHORIZED' }] }), {
        'www-authenticate': `Bearer realm="http://${host}/token",service="test-registry",scope="repository:${url.pathname.split('/').slice(2, -2).join('/')}:pull"`
      })
    }
    if (url.pathname === '/v2/') return send(res, 200, '{}')
    const m = /^\/v2\/(.+)\/(manifests|blobs)\/([^/]+)$/.exec(url.pathname)
    const repo = m ? repos.get(m[1]) : undefined
    if (!m || !repo) return send(res, 404, JSON.stringify({ errors: [{ code: 'NAME_UNKNOWN' }] }))
    const digest = m[3].startsWith('sha256:') ? m[3] : repo.tags.get(m[3])
    const blob = digest !== undefined ? repo.blobs.get(digest) : undefined
    if (digest === undefined || !blob) return send(res, 404, JSON.stringify({ errors: [{ code: m[2] === 'blobs' ? 'BLOB_UNKNOWN' : 'MANIFEST_UNKNOWN' }] }))
    if (m[2] === 'blobs') return send(res, 307, '', { location: `/raw/${m[1]}/${digest}` })
    return send(res, 200, corrupt.get(digest) ?? blob, { 'content-type': repo.mediaTypes.get(digest) ?? 'application/vnd.oci.image.manifest.v1+json', 'docker-content-digest': digest })
  }

  const server: Server = createServer(handle)
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    host,
    requests,
    addRepository: (name, tag, layout) => {
      const blobs = new Map<string, Buffer>()
      for (const [path, bytes] of layout.files) if (path.startsWith('blobs/sha256/')) blobs.set(`sha256:${path.slice(13)}`, bytes)
      const index = JSON.parse((layout.files.get('index.json') as Buffer).toString('utf8'))
      const mediaTypes = new Map<string, string>([[layout.manifestDigest, index.manifests[0].mediaType]])
      repos.set(name, { tags: new Map([[tag, layout.manifestDigest]]), blobs, mediaTypes })
    },
    corruptBlob: (digest, bytes) => { corrupt.set(digest, bytes) },
    close: async () => { server.closeAllConnections(); await new Promise<void>(resolve => server.close(() => resolve())) }
  }
}
