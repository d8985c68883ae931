// The certificate manager (client-go's certificate.Manager): keeps one certificate current, renewing it at a jittered 70-90% of its lifetime, with back-off on failure.

import type { ApiClient } from '../../../apiserver/client/rest-client.js'
import { createCsrPem, generatePrivateKey, usagesFor, type CsrTemplate } from './csr.js'
import type { CertificateStore } from './file-store.js'
import type { CertKeyPair } from './pem.js'
import { requestCertificate, waitForCertificate } from './request.js'
import { satisfiesTemplate } from './template-match.js'
import { systemControllerClock } from '../../../apiserver/controllers/clock.js'

/** The longest delay a Node.js timer takes (2^31 - 1 ms). */
const MAX_TIMER_MS = 2 ** 31 - 1

/** Time for the manager; apiserver/controllers/clock.ts's clocks (system and fake) fit. */
export interface ManagerClock {
  now(): number
  after(ms: number, fn: () => void): { cancel(): void }
}


export interface ManagerLogger { info(o: object, m?: string): void; warn(o: object, m?: string): void; error(o: object, m?: string): void }

export interface CertificateManagerOptions {
  /** For logs: `client` or `serving`. */
  name: string
  store: CertificateStore
  /** What to ask for; undefined while it cannot be known yet (a serving certificate before the node has addresses). */
  template: () => CsrTemplate | undefined
  signerName: string
  purpose: 'client' | 'server'
  /** The client requests go through: the current credentials. */
  client: () => ApiClient
  /**
   * Used instead once the current certificate has expired (or there is none): the bootstrap connection, as the kubelet
   * falls back to bootstrapping when its client certificate expired unrenewed.
   */
  fallbackClient?: () => ApiClient | undefined
  /** spec.expirationSeconds of the requests. */
  expirationSeconds?: number
  /** Called with each new pair once it is stored. */
  onRotated: (pair: CertKeyPair) => void
  logger: ManagerLogger
  clock?: ManagerClock
  random?: () => number
  /** How long one request may wait for its certificate (client-go: 15 minutes). */
  waitTimeoutMs?: number
  /** Watch length / poll interval while waiting. */
  pollMs?: number
}

export interface CertificateManager {
  current(): CertKeyPair | undefined
  /** Schedules the first renewal (now when there is no usable certificate). */
  start(): void
  /** Cancels the timer and any request under way. */
  stop(): void
  /** When the next attempt is due (undefined when stopped or busy). */
  nextAttemptAt(): number | undefined
  /** Resolves after the next attempt that finishes, with whether it produced a certificate. */
  attempted(): Promise<boolean>
}

/** notBefore + a uniform 70-90% of the lifetime (client-go's jitteryDuration: Jitter(total, 0.2) - 0.3 * total). */
export function rotationDeadline (pair: CertKeyPair, random: () => number): number {
  const total = pair.notAfter - pair.notBefore
  return pair.notBefore + total * 7 / 10 + total * 2 * random() / 10
}

/** client-go's retries: 2s doubling for four attempts, then every 32s; 10% jitter. */
export function retryDelay (failures: number, random: () => number): number {
  const base = failures <= 4 ? 2000 * 2 ** (failures - 1) : 32_000
  return base * (1 + 0.1 * random())
}

export function createCertificateManager (o: CertificateManagerOptions): CertificateManager {
  const clock = o.clock ?? systemControllerClock
  const random = o.random ?? Math.random
  let current = o.store.current()
  let timer: { cancel(): void } | undefined
  let due: number | undefined
  let failures = 0
  let running = false
  let abort = new AbortController()
  let waiters: Array<(ok: boolean) => void> = []

  function needsNewNow (pair: CertKeyPair | undefined): boolean {
    if (pair === undefined) return true
    const t = o.template()
    return t !== undefined && !satisfiesTemplate(pair.certPem, t)
  }

  function schedule (ms: number): void {
    timer?.cancel()
    due = clock.now() + Math.max(0, ms)
    arm()
  }

  /**
   * Timers cannot wait longer than about 24.8 days (a longer delay fires at once, as setTimeout's overflow does):
   * a renewal months away is reached in steps of at most that.
   */
  function arm (): void {
    const left = Math.max(0, (due ?? clock.now()) - clock.now())
    timer = clock.after(Math.min(left, MAX_TIMER_MS), () => {
      timer = undefined
      if (due !== undefined && clock.now() < due) { arm(); return }
      due = undefined
      void attempt()
    })
  }

  function scheduleRenewal (): void {
    if (needsNewNow(current)) { schedule(0); return }
    const pair = current as CertKeyPair
    const deadline = rotationDeadline(pair, random)
    o.logger.info({ certificate: o.name, expiration: new Date(pair.notAfter).toISOString(), deadline: new Date(deadline).toISOString() },
      'certificate expiration and rotation deadline')
    schedule(deadline - clock.now())
  }

  async function rotate (signal: AbortSignal): Promise<boolean> {
    const template = o.template()
    if (template === undefined) {
      o.logger.info({ certificate: o.name }, 'no certificate template yet; will try again')
      return false
    }
    const expired = current === undefined || clock.now() >= current.notAfter
    const fallback = expired ? o.fallbackClient?.() : undefined
    const client = fallback ?? o.client()
    o.logger.info({ certificate: o.name, viaBootstrap: fallback !== undefined }, 'rotating certificates')
    const keyPem = await generatePrivateKey()
    const csrPem = await createCsrPem(keyPem, template)
    const req = await requestCertificate(client, {
      csrPem,
      signerName: o.signerName,
      usages: usagesFor(keyPem, o.purpose),
      generateName: fallback !== undefined ? 'node-csr-' : 'csr-',
      expirationSeconds: o.expirationSeconds
    })
    signal.throwIfAborted()
    const certPem = await waitForCertificate(client, req, { timeoutMs: o.waitTimeoutMs ?? 15 * 60_000, pollMs: o.pollMs, signal, logger: o.logger })
    signal.throwIfAborted()
    current = o.store.update(certPem, keyPem)
    o.logger.info({ certificate: o.name, csr: req.name, expiration: new Date(current.notAfter).toISOString() }, 'certificate rotation succeeded')
    o.onRotated(current)
    return true
  }

  async function attempt (): Promise<void> {
    // An attempt of before a stop/start may still be unwinding: come back shortly.
    if (running) { schedule(1000); return }
    running = true
    const signal = abort.signal
    let ok = false
    try {
      ok = await rotate(signal)
    } catch (err) {
      if (!signal.aborted) o.logger.error({ certificate: o.name, err: (err as Error).message }, 'failed while requesting a signed certificate from the control plane')
    }
    running = false
    if (signal.aborted) return
    if (ok) {
      failures = 0
      scheduleRenewal()
    } else {
      failures++
      schedule(retryDelay(failures, random))
    }
    const done = waiters
    waiters = []
    for (const w of done) w(ok)
  }

  return {
    current: () => current,
    start () {
      abort = new AbortController()
      scheduleRenewal()
    },
    stop () {
      timer?.cancel()
      timer = undefined
      due = undefined
      abort.abort()
      for (const w of waiters.splice(0)) w(false)
    },
    nextAttemptAt: () => due,
    attempted: async () => await new Promise<boolean>(resolve => { waiters.push(resolve) })
  }
}
