// The plain HTTP port of the controller manager and the scheduler: health checks and their /metrics.

import { createServer, type Server } from 'node:http'
import type { ComponentMetrics } from '../metrics/component-metrics.js'

export interface ComponentServerOptions {
  port: number
  address: string
  /** Whether a leader kept renewing its lease (`/healthz/leaderElection`); absent: always. */
  leaderHealthy?: () => boolean
  /** Served at /metrics (Prometheus text). */
  metrics?: ComponentMetrics
}

/** `/healthz` (ok while the process runs), `/healthz/leaderElection` (failing when a leader missed its renewals), `/metrics`. */
export async function serveComponent (o: ComponentServerOptions): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0]
    if (path === '/metrics' && o.metrics !== undefined) {
      const m = o.metrics
      m.text().then(body => { res.writeHead(200, { 'content-type': m.contentType }).end(body) }, (err: Error) => {
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`metrics: ${err.message}\n`)
      })
      return
    }
    const healthy = path === '/healthz' || path === '/livez' || path === '/readyz' ? true
      : path === '/healthz/leaderElection' ? o.leaderHealthy?.() ?? true : undefined
    if (healthy === undefined) { res.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found\n'); return }
    res.writeHead(healthy ? 200 : 500, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' })
      .end(healthy ? 'ok' : 'leaderElection check failed: the lease was not renewed in time')
  })
  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(o.port, o.address, () => resolve()) })
  return server
}

/** Serves each component that has a port (0 or absent: none); if one cannot listen, those already listening close. */
export async function serveComponents (list: Array<{ name: string, port?: number, metrics: ComponentMetrics }>, address: string,
  logger: { info(o: object, m?: string): void }): Promise<Server[]> {
  const servers: Server[] = []
  try {
    for (const c of list) {
      if (c.port === undefined || c.port <= 0) continue
      servers.push(await serveComponent({ port: c.port, address, metrics: c.metrics }))
      logger.info({ component: c.name, port: c.port }, 'serving health checks and metrics')
    }
  } catch (err) {
    for (const s of servers) s.close()
    throw err
  }
  return servers
}
