// TLS material and settings of the orchlet's server: a self-signed pair in --cert-dir unless files are given.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { nodeTlsVersion, opensslCipherName } from '../config/tls.js'

export interface ServingTlsOptions {
  certDir: string
  tlsCertFile?: string
  tlsPrivateKeyFile?: string
  /** Go names, e.g. VersionTLS12. */
  tlsMinVersion?: string
  /** Go names, e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256. */
  tlsCipherSuites: string[]
  nodeName: string
  addresses: string[]
}

export interface ServingTls { cert: Buffer; key: Buffer; minVersion?: 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3'; ciphers?: string }

/** Loads the configured pair, or makes (once) and reuses a self-signed pair in certDir, as the kubelet does. */
export async function loadServingTls (o: ServingTlsOptions): Promise<ServingTls> {
  let cert: Buffer
  let key: Buffer
  if (o.tlsCertFile && o.tlsPrivateKeyFile) {
    cert = readFileSync(o.tlsCertFile)
    key = readFileSync(o.tlsPrivateKeyFile)
  } else {
    const certPath = join(o.certDir, 'orchlet.crt')
    const keyPath = join(o.certDir, 'orchlet.key')
    if (!existsSync(certPath) || !existsSync(keyPath)) {
      mkdirSync(o.certDir, { recursive: true, mode: 0o700 })
      const altNames = [
        { type: 2, value: o.nodeName },
        ...o.addresses.map(a => /^[\d.:a-fA-F]+$/.test(a) && (a.includes('.') || a.includes(':')) ? { type: 7, ip: a } : { type: 2, value: a })
      ]
      // selfsigned (and its X.509 library) is loaded only to make a certificate, not on every start.
      const { default: selfsigned } = await import('selfsigned')
      const pems = await selfsigned.generate([{ name: 'commonName', value: `${o.nodeName}@${Math.floor(Date.now() / 1000)}` }],
        { keyType: 'ec', days: 365, algorithm: 'sha256', extensions: [{ name: 'subjectAltName', altNames }] } as unknown as Parameters<typeof selfsigned.generate>[1])
      writeFileSync(certPath, pems.cert, { mode: 0o644 })
      writeFileSync(keyPath, pems.private, { mode: 0o600 })
    }
    cert = readFileSync(certPath)
    key = readFileSync(keyPath)
  }
  const tls: ServingTls = { cert, key }
  if (o.tlsMinVersion) tls.minVersion = nodeTlsVersion(o.tlsMinVersion)
  if (o.tlsCipherSuites.length > 0) {
    // TLS 1.3 suites are not configurable (as in Go); the rest map to OpenSSL names.
    const tls12 = o.tlsCipherSuites.map(opensslCipherName).filter((s): s is string => s !== undefined && !s.startsWith('TLS_'))
    if (tls12.length > 0) tls.ciphers = tls12.join(':')
  }
  return tls
}
