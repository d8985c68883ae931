// `--tls-min-version` and `--tls-cipher-suites` in Go's names (as kube-apiserver takes them) turned into Node TLS options.

import type { SecureVersion } from 'node:tls'

const VERSIONS: Record<string, SecureVersion> = {
  VersionTLS10: 'TLSv1',
  VersionTLS11: 'TLSv1.1',
  VersionTLS12: 'TLSv1.2',
  VersionTLS13: 'TLSv1.3'
}

/** Go's cipher suite names and OpenSSL's; TLS 1.3 suites are not configurable in Go, so not here either. */
const SUITES: Record<string, string> = {
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: 'ECDHE-ECDSA-AES128-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: 'ECDHE-ECDSA-AES256-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: 'ECDHE-RSA-AES128-SHA',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: 'ECDHE-RSA-AES256-SHA',
  TLS_RSA_WITH_AES_128_GCM_SHA256: 'AES128-GCM-SHA256',
  TLS_RSA_WITH_AES_256_GCM_SHA384: 'AES256-GCM-SHA384',
  TLS_RSA_WITH_AES_128_CBC_SHA: 'AES128-SHA',
  TLS_RSA_WITH_AES_256_CBC_SHA: 'AES256-SHA'
}

export interface TlsTuning { minVersion?: SecureVersion; ciphers?: string }

/** Throws an Error naming the flag and the accepted values for anything unknown. */
export function tlsTuning (minVersion: string | undefined, cipherSuites: string | undefined): TlsTuning {
  const out: TlsTuning = { minVersion: 'TLSv1.2' }
  if (minVersion !== undefined && minVersion !== '') {
    const v = VERSIONS[minVersion]
    if (v === undefined) throw new Error(`--tls-min-version: unknown TLS version "${minVersion}"; allowed values: ${Object.keys(VERSIONS).join(', ')}`)
    out.minVersion = v
  }
  if (cipherSuites !== undefined && cipherSuites !== '') {
    const names = cipherSuites.split(',').map(s => s.trim()).filter(s => s !== '')
    const bad = names.filter(n => SUITES[n] === undefined)
    if (bad.length > 0) throw new Error(`--tls-cipher-suites: cipher suite ${bad[0]} not supported or doesn't exist`)
    out.ciphers = names.map(n => SUITES[n]).join(':')
  }
  return out
}
