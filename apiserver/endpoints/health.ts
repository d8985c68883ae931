// /healthz, /livez, /readyz with `verbose`, `exclude` and per-check paths (spec doc 2 section 4).

import type { IncomingMessage, ServerResponse } from 'node:http'

/** A named check; throwing (or rejecting) means failed. The reason is logged, never shown to clients. */
export interface HealthCheck {
  name: string
  check(): void | Promise<void>
  /**
   * Informational: a failure is listed (`[-]name failed`) but does not fail the endpoint it is part of; its own
   * path (/readyz/<name>) still answers 500 while it fails.
   */
  informational?: boolean
  /** Its failures are reported elsewhere (e.g. logged once per transition): not logged per request. */
  quiet?: boolean
}

export interface HealthEndpoints {
  /** Serves /healthz, /livez, /readyz and their /<check> paths; false when the path is not one of them. */
  serve(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean>
}

export interface HealthOptions {
  /** Checks shared by all three endpoints (ping, log, etcd, poststarthook/...). */
  checks: HealthCheck[]
  /** Checks only /readyz runs (shutdown, ...). */
  readyChecks: HealthCheck[]
  onFailure?: (endpoint: string, check: string, err: unknown) => void
  /**
   * True while --livez-grace-period runs from the start: /livez then takes unfinished post-start hooks as done
   * (they are expected to finish), as kube-apiserver does; /healthz and /readyz still report them.
   */
  inLivezGrace?: () => boolean
}

const TIMEOUT_MS = 5000

async function runCheck (c: HealthCheck): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined
  try {
    await Promise.race([
      Promise.resolve().then(() => c.check()),
      new Promise((_resolve, reject) => { timer = setTimeout(() => reject(new Error('timed out')), TIMEOUT_MS) })
    ])
    return undefined
  } catch (err) {
    return err ?? new Error('failed')
  } finally {
    clearTimeout(timer)
  }
}

function text (res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'X-Content-Type-Options': 'nosniff',
    'Content-Length': String(Buffer.byteLength(body))
  })
  res.end(body)
}

export function createHealthEndpoints (opts: HealthOptions): HealthEndpoints {
  const graced = (c: HealthCheck): HealthCheck => c.name.startsWith('poststarthook/')
    ? { ...c, check: async () => { if (opts.inLivezGrace?.() !== true) await c.check() } }
    : c
  const checksFor = (endpoint: string): HealthCheck[] =>
    endpoint === 'readyz' ? [...opts.checks, ...opts.readyChecks] : endpoint === 'livez' ? opts.checks.map(graced) : opts.checks

  async function all (res: ServerResponse, endpoint: string, url: URL): Promise<void> {
    const verbose = url.searchParams.has('verbose') && url.searchParams.get('verbose') !== 'false'
    const excluded = new Set(url.searchParams.getAll('exclude'))
    const checks = checksFor(endpoint)
    const lines: string[] = []
    let failed = false
    const results = await Promise.all(checks.map(async c => excluded.has(c.name) ? 'excluded' : await runCheck(c)))
    checks.forEach((c, i) => {
      const r = results[i]
      if (r === 'excluded') lines.push(`[+]${c.name} excluded: ok`)
      else if (r === undefined) lines.push(`[+]${c.name} ok`)
      else {
        if (c.informational !== true) failed = true
        lines.push(`[-]${c.name} failed: reason withheld`)
        if (c.quiet !== true) opts.onFailure?.(endpoint, c.name, r)
      }
    })
    const unknown = [...excluded].filter(n => !checks.some(c => c.name === n))
    if (unknown.length > 0) {
      lines.push(`warn: some health checks cannot be excluded: no matches for "${unknown.join('", "')}"`)
    }
    if (failed) {
      text(res, 500, `${lines.join('\n')}\n${endpoint} check failed\n`)
      return
    }
    text(res, 200, verbose ? `${lines.join('\n')}\n${endpoint} check passed\n` : 'ok')
  }

  return {
    async serve (req, res, url) {
      const m = /^\/(healthz|livez|readyz)(?:\/(.+?))?\/?$/.exec(url.pathname)
      if (m === null) return false
      const endpoint = m[1]
      const name = m[2]
      if (name === undefined) {
        await all(res, endpoint, url)
        return true
      }
      const check = checksFor(endpoint).find(c => c.name === name)
      if (check === undefined) {
        text(res, 404, '404 page not found\n')
        return true
      }
      const err = await runCheck(check)
      if (err === undefined) text(res, 200, 'ok')
      else {
        if (check.quiet !== true) opts.onFailure?.(endpoint, name, err)
        text(res, 500, 'internal server error: reason withheld\n')
      }
      return true
    }
  }
}
